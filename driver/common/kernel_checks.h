// Which of the sanitizer build's checks the unrolled SIMD kernels leave out (.ci/common.sh
// san_flags: clang, ASan + UBSan + libFuzzer coverage, -O1). ORK_KERNEL_CHECKS_BEGIN and
// ORK_KERNEL_CHECKS_END around a kernel file's functions drop UBSan's pointer-overflow
// check from them and keep every other check. Their unrolled bodies form thousands of
// addresses, and a check on each dominated the build: measured one file at a time, clang 14
// with CI's flags, 2026-12-07 (docs/reliability.md "CI time", lever 70):
//   lib/quant/group_kernel_x86.cpp   289 s -> 72 s
//   lib/matmul/layout_host_sum.cpp    39 s -> 8.7 s
//   lib/matmul/layout_host_i16.cpp    13 s -> 2.9 s
// An address past its buffer that the kernel then reads or writes is still reported by ASan
// at the access; what goes unchecked is address arithmetic that wraps without being used.
// Elsewhere (the parsers, the planners) the check stays. No-ops for gcc.
#pragma once

#if defined(__clang__)
#define ORK_KERNEL_CHECKS_BEGIN \
  _Pragma("clang attribute push(__attribute__((no_sanitize(\"pointer-overflow\"))), apply_to = function)")
#define ORK_KERNEL_CHECKS_END _Pragma("clang attribute pop")
#else
#define ORK_KERNEL_CHECKS_BEGIN
#define ORK_KERNEL_CHECKS_END
#endif
