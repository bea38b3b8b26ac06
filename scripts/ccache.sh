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
if command -v ccache >/dev/null 2>&1; then
  CCACHE_BASEDIR=${CCACHE_BASEDIR:-$(dirname "$(pwd -P)")}
  CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}
  CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-20G}
  export CCACHE_BASEDIR CCACHE_NOHASHDIR CCACHE_MAXSIZE
fi
