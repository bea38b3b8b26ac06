# Sourced (". scripts/ccache.sh") by scripts/bootstrap and the .ci/ steps, from the
# repository's root: the compiler cache every build dir uses (docs/reliability.md "CI time").
# Meson wraps the native gcc in ccache by itself when ccache is on PATH; the clang build
# (.ci/sanitizers, .ci/fuzz: CC="ccache clang") and the cross file (scripts/cross/aarch64.ini)
# name it.
#   base_dir: the folder that holds the clone. ccache then hashes every path under it relative
#     to the build dir (../lib/api/api.cpp), the same in every clone, so a clean clone in
#     another folder (CI) hits the objects of the developer's own builds.
#   hash_dir off: with debug info the build dir's absolute path is hashed by default, which
#     would make each clone miss; the cost is a DW_AT_comp_dir naming the first clone's dir.
#   max_size: five build dirs (native, clang sanitizers, TSan, arm64, llama.cpp) of about
#     1-2 GB each stay cached together.
#   depend_mode: on a miss, no preprocessor run. Outside it, ccache preprocesses each
#     source it cannot find by its direct hash (a second pass over every header), so every
#     object of a cold build costs that pass on top of its compile: about 20-27 s of CPU
#     per build dir of this tree (docs/reliability.md "CI time", lever 65). The include
#     files come from the compiler's own dependency file instead (-MD: meson and cmake's
#     Ninja generator pass it); a hit is found by the direct hash as before.
if command -v ccache >/dev/null 2>&1; then
  CCACHE_BASEDIR=${CCACHE_BASEDIR:-$(dirname "$(pwd -P)")}
  CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}
  CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-20G}
  CCACHE_DEPEND=${CCACHE_DEPEND:-1}
  export CCACHE_BASEDIR CCACHE_NOHASHDIR CCACHE_MAXSIZE CCACHE_DEPEND
fi
