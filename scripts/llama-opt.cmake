# Included by llama.cpp's CMake after each project() call (CMAKE_PROJECT_INCLUDE, passed by
# scripts/llama): llama.cpp's own code compiles at -O1; ggml and test-backend-ops.cpp at the
# build type's -O3.
#
# Why: of the cold build's compile CPU (801 s, 2026-12-06), ggml (ggml-base, ggml-cpu and
# its kernels) is 92 s; libllama, the common library (and cpp-httplib, which it links),
# test-backend-ops.cpp and llama-bench.cpp are the other 709 s, 525 s at -O1. What suite
# ggml's tests spend their time on is ggml's work (the CPU backend's reference, the ops),
# libork's, and test-backend-ops' own (its test data and comparisons). test-backend-ops.cpp
# keeps -O3 (the last -O on gcc's command line wins): with it at -O1 the suite measured 10 %
# more CPU at load, which test-backend-ops alone did not reproduce; kept the same code until
# that is settled. libllama and the common library load the model, build the graphs, sample.
# Figures and commands: docs/reliability.md "CI time", lever 46.
#
# How: the flags of a target are its directory's CMAKE_<LANG>_FLAGS_RELEASE. At the top
# project ("llama.cpp") they are set to -O1 and every directory below inherits that; in
# ggml's project (added as a subdirectory) the variables are unset, which exposes the cache
# entries again: CMake's own Release flags, unchanged. test-backend-ops is given -O3 once
# every directory is read (DEFER: the target does not exist yet here).
#
# AMX off in the CPU backend (ggml-cpu): with GGML_NATIVE, -march=native on a CPU whose CPUID
# lists AMX (Intel Sapphire Rapids) compiles ggml's AMX matmul (ggml-cpu/amx/mmq.cpp, under
# __AMX_INT8__), and in this project's 2-vCPU VMs of that CPU its first TILEZERO stopped every
# ggml test with SIGILL (2026-12-06, kernel 6.18): the guest does not run AMX though CPUID
# says it can. The -mno-amx-* flags come after -march=native's own -mamx-* on the command line
# (target options append), so the last ones win and the AVX-512 kernels run instead.
if(PROJECT_NAME STREQUAL "ggml")
  unset(CMAKE_C_FLAGS_RELEASE)
  unset(CMAKE_CXX_FLAGS_RELEASE)
  cmake_language(DEFER CALL target_compile_options ggml-cpu PRIVATE -mno-amx-tile -mno-amx-int8 -mno-amx-bf16)
else()
  string(REPLACE "-O3" "-O1" CMAKE_C_FLAGS_RELEASE "${CMAKE_C_FLAGS_RELEASE}")
  string(REPLACE "-O3" "-O1" CMAKE_CXX_FLAGS_RELEASE "${CMAKE_CXX_FLAGS_RELEASE}")
  cmake_language(DEFER CALL target_compile_options test-backend-ops PRIVATE -O3)
endif()
