// Packing for the fast int8 path (internal to lib/ref): A into rows (or tiles) of 4-byte K
// groups in the kernel's format, B into column panels of `nr` columns, from row-major or
// column-major B. The format of both is the Kernel's (kernels.h); pack.cpp says how.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "lib/ref/kernels.h"

namespace ork::ref::detail {

// K groups of one packed row (or panel), padded to the kernel's group_align.
int64_t padded_groups(const Kernel& kr, int64_t k);
// Bytes of packed A: rows padded to a multiple of mr, `groups` 4-byte groups each.
size_t packed_a_bytes(const Kernel& kr, Dims d, int64_t groups);
// Byte offset in packed A (padded to `rows` rows, `groups` groups) of row block `block`'s K
// chunk from group g0 (g0 a multiple of chunk_groups): what the micro-kernel is given.
int64_t a_chunk_offset(const Kernel& kr, int64_t rows, int64_t groups, int64_t block, int64_t g0);
// A (d.m x d.k, row-major) into `out` (packed_a_bytes), zero padded (pack.cpp).
void pack_a(const Kernel& kr, std::span<const int8_t> a, Dims d, int64_t groups, uint8_t* out);
// Panels p0 .. p1-1 of row-major B into dst, with each column's bias (pack.cpp).
void pack_panels(const Kernel& kr, std::span<const int8_t> b, Dims d, int64_t p0, int64_t p1,
                 int64_t groups, uint8_t* dst, int32_t* bias);
// The same from column-major B; `dst` and `bias` must be zero on entry.
void pack_panels_columns(const Kernel& kr, const int8_t* bt, Dims d, int64_t p0, int64_t p1,
                         int64_t groups, uint8_t* dst, int32_t* bias);

// -128 x each column's sum over `count` packed panels of 4-byte quads (nr columns, `groups`
// groups each), modulo 2^32, into bias[count * nr]: what the short-M rows kernel (u8_biased
// A) needs on a tier whose own A is signed (AMX). Padding is zero and adds nothing.
void column_bias(const uint8_t* panels, int64_t count, int64_t groups, int nr, int32_t* bias);

}  // namespace ork::ref::detail
