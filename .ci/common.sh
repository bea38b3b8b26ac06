# Sourced by .ci/run and by each step script (.ci/sanitizers, .ci/fuzz, .ci/arm64), from the
# repository's root: the compiler cache (scripts/ccache.sh), the step timer, the meson options
# of every CI build dir, and the one clang build the sanitizer suite and the fuzz harnesses share.
. scripts/ccache.sh

# Every CI build dir's first configure: warnings as errors, and each target of several sources
# compiled as one translation unit (meson option unity_sources, scripts/unity_source.py: its
# headers parsed once; docs/reliability.md "CI time"). A build dir that exists keeps its options.
ci_meson_opts="-Dwerror=true -Dunity_sources=true"
# build and build-arm64 (the gcc builds that no sanitizer report reads): no debug info,
# still -O2 with assertions (meson's debugoptimized buildtype less -g; b_ndebug=if-release
# keeps NDEBUG undefined). Nothing in CI reads debug info (the exports test reads the
# dynamic symbol table), and the compile costs about a third less (docs/reliability.md
# "CI time", lever 35). The README's command for a developer keeps -g; build-tsan keeps it
# for its race reports' stacks.
ci_build_opts="$ci_meson_opts -Ddebug=false"
# build alone: the test programs' own code (every program and static library under tests/) at
# -O1, the libraries they test still at -O2 (meson option tests_optimization,
# tests/meson.build). Measured natively: their compile 0.76 of -O2's (about 105 s of CPU off
# a cold build), the tests' CPU time no higher in the default suite and at most about 7 s
# more in the slow one (docs/reliability.md "CI time", lever 42). Not in build-arm64: under
# qemu-user the test code is emulated and its loops weigh more; the default suite took about
# 7 % more CPU at -O1 there, e2e_tests' dtype sweep 1.6x, and e2e_int4_stacked (21 s of its
# 30 s timeout at -O2) would time out (lever 62).
ci_native_opts="$ci_build_opts -Dtests_optimization=1"

# ci_step NAME COMMAND [ARG...]: runs the command, then prints "ci: NAME N s" (its wall time,
# passed or not) and stops the script with the command's exit status if it failed.
ci_step() {
  ci_name=$1
  shift
  ci_t0=$(date +%s)
  ci_rc=0
  "$@" || ci_rc=$?
  echo "ci: $ci_name $(($(date +%s) - ci_t0)) s"
  if [ "$ci_rc" -ne 0 ]; then
    echo "ci: $ci_name FAILED (exit $ci_rc)" >&2
    exit "$ci_rc"
  fi
}

# ci_background NAME COMMAND [ARG...]: starts the command beside the steps that follow, its
# output kept in a file; ci_wait prints that output, then "ci: NAME N s" (the command's own
# wall time, overlapped with those steps) and "ci: NAME-wait N s" (how long the run stood
# waiting for it), and stops the script with the command's exit status if it failed. One
# background command at a time.
ci_background() {
  ci_bg_name=$1
  shift
  ci_bg_out=$(mktemp)
  ci_bg_t0=$(date +%s)
  (
    rc=0
    "$@" >"$ci_bg_out" 2>&1 || rc=$?
    echo "$rc $(date +%s)" >"$ci_bg_out.end"
  ) &
  ci_bg_pid=$!
}
ci_wait() {
  ci_t0=$(date +%s)
  wait "$ci_bg_pid" || true
  cat "$ci_bg_out"
  read -r ci_rc ci_bg_t1 <"$ci_bg_out.end" || { ci_rc=1; ci_bg_t1=$ci_t0; }
  rm -f "$ci_bg_out" "$ci_bg_out.end"
  echo "ci: $ci_bg_name $((ci_bg_t1 - ci_bg_t0)) s"
  echo "ci: $ci_bg_name-wait $(($(date +%s) - ci_t0)) s"
  if [ "$ci_rc" -ne 0 ]; then
    echo "ci: $ci_bg_name FAILED (exit $ci_rc)" >&2
    exit "$ci_rc"
  fi
}

# build-san: clang with AddressSanitizer + UndefinedBehaviorSanitizer and libFuzzer's
# coverage (-Dfuzz=enabled), serving both .ci/sanitizers (every suite but slow) and .ci/fuzz
# (the fuzz_<harness> binaries): one compile of the tree instead of a gcc ASan build and a
# clang fuzz build. -O1 and no debug info: the sanitizers' own guidance for speed of checked
# code, and about half the compile time of -O2 -g (docs/reliability.md "CI time"); ASan
# symbolises reports by function, UBSan's file:line is compiled into each check.
# -ffp-contract=off: what the emulator's core.cpp asks of gcc by pragma (no fused multiply-add
# where its fp16 arithmetic must round each step), which clang does not read
# (-Wno-unknown-pragmas: gcc's optimize pragma).
# -shared-libsan (with its directory as rpath): the runtime as a shared library, as gcc links
# it, so the emulator's shim can be preloaded behind it into any process (the tests preload
# "runtime:shim", driver/emu/shim/meson.build); with clang's default static runtime an
# instrumented shim cannot load into an uninstrumented program (/bin/true in run-on-board).
# The test programs stay at the build's -O1, not -Dtests_optimization=0: at -O0 their compile
# costs about 256 s of CPU less, but ASan then checks every load and store the test code kept
# in registers: the suite's tests took about 376 s of CPU more (exec_pack 3.5x) and two
# timed out under load (docs/reliability.md "CI time", lever 50).
san_setup() {
  [ -f build-san/build.ninja ] && return 0
  ccache_prefix=""
  command -v ccache >/dev/null 2>&1 && ccache_prefix="ccache "
  san_link="-shared-libsan -Wl,-rpath,$(clang --print-runtime-dir)"
  # shellcheck disable=SC2086
  CC="${ccache_prefix}clang" CXX="${ccache_prefix}clang++" meson setup build-san $ci_meson_opts \
    -Dfuzz=enabled -Dbenchmarks=disabled -Db_sanitize=address,undefined -Db_lundef=false \
    -Ddebug=false -Doptimization=1 -Dc_args="$san_flags" -Dcpp_args="$san_flags" \
    -Dc_link_args="$san_link" -Dcpp_link_args="$san_link"
}
san_flags="-ffp-contract=off -Wno-unknown-pragmas"
