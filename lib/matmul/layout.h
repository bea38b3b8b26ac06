// Native NPU layouts (docs/regcmd-contract.md section 2; docs/hardware.md section 5) and the
// host-side pack / unpack of one slice (the per-call, threaded entry points: layout_host.h).
//
// Index functions return the element index (nibble index for int4) of logical element
// (m, k) / (k, n) / (m, n) inside a native buffer; they are the specification and the tests'
// oracle. The pack/unpack functions are the fast path: loops over 16-byte atoms and 32x32
// blocks, no per-element index call (decode shapes must pack in microseconds).
// `rows` of the A / C functions: those rows only (threads split a big matrix by rows).
#pragma once

#include <cstdint>
#include <span>

#include "driver/common/int4.h"
#include "driver/common/result.h"
#include "lib/matmul/plan.h"

namespace ork::matmul {

// Feature A, (K/fa, M, fa) with fa = feature_atom(dtype): rows = rows of the A buffer (mp).
int64_t feature_index(DType dtype, int64_t m, int64_t k, int64_t rows);
// Weights B, (N/wa, K/32, wa, 32) with wa = weight_atom(dtype): depth = K of the block (kt).
int64_t weight_index(DType dtype, int64_t k, int64_t n, int64_t depth);
// Output C, (N/c2, M, c2): c2 = 4 for int32/fp32, 8 for fp16 (OUT_CVT) or int16 partials.
int64_t output_index(int64_t c2, int64_t m, int64_t n, int64_t rows);
// Output of a dtype's default result type (int8 -> int32, fp16 -> fp32, int4 -> int16).
int64_t output_index(DType dtype, int64_t m, int64_t n, int64_t rows);

// The packers' buffer check (every dtype's): -EINVAL naming `what`, the elements given and
// the plan's need, unless have == need.
Status check_size(const char* what, int64_t have, int64_t need);

// Rows [begin, end) of C or A: threads split a big matrix by rows (end -1: to the last row).
struct RowRange {
  int64_t begin = 0, end = -1;
};

// A row-major M x K (plan.shape) -> native (kp/16, mp, 16), zero padding to kp.
// `out` must hold plan.a_bytes() bytes. `rows` limits the work to those rows of A.
Status pack_a_int8(std::span<const int8_t> a, const Plan& plan, std::span<int8_t> out, RowRange rows = {});

// B row-major K x N -> per-slice native weights: slice s holds [np/32][kt_s/32][32][32],
// zero padding to kp and np. `out` must hold plan.b_bytes() bytes.
Status pack_b_int8(std::span<const int8_t> b, const Plan& plan, std::span<int8_t> out);
// The same from rows `ld` >= N elements apart (an engine's strided K x N view).
Status pack_b_int8_strided(const int8_t* b, int64_t ld, const Plan& plan, std::span<int8_t> out);

// One slice's native int32 output (np/4, mp, 4) -> row-major M x N: copy (slice 0) or add.
// `rows` limits the work to those rows of C.
Status unpack_c_int32(std::span<const int32_t> native, const Plan& plan, std::span<int32_t> c, RowRange rows = {});
Status accumulate_c_int32(std::span<const int32_t> native, const Plan& plan, std::span<int32_t> c,
                          RowRange rows = {});
// All slices at once: `native` holds plan.slices outputs back to back.
Status unpack_c_slices_int32(std::span<const int32_t> native, const Plan& plan,
                             std::span<int32_t> c);

// ---- fp16 and int4 (layout_dtypes.cpp): B in per-element loops over the index functions
// above; A and C in the 16-byte atom loops of layout_host.h (int8's too).
// fp16 operands are binary16 bit patterns. int4 operands are packed nibble streams of the
// row-major matrix (element i = row*cols + col in the low nibble of byte i/2 when i is even,
// else the high one; docs/regcmd-contract.md section 2), ceil(rows*cols/2) bytes.
Status pack_a_fp16(std::span<const uint16_t> a, const Plan& plan, std::span<uint16_t> out, RowRange rows = {});
Status pack_b_fp16(std::span<const uint16_t> b, const Plan& plan, std::span<uint16_t> out);
Status pack_a_int4(std::span<const uint8_t> a, const Plan& plan, std::span<uint8_t> out, RowRange rows = {});
Status pack_b_int4(std::span<const uint8_t> b, const Plan& plan, std::span<uint8_t> out);
// w4a8: a packed int4 stream of `count` elements widened to one int8 per element.
Status widen_int4(std::span<const uint8_t> packed, int64_t count, std::span<int8_t> out);
// Bytes of a packed int4 stream of `count` elements.
inline int64_t int4_packed_bytes(int64_t count) { return int4::packed_bytes(count); }

// One slice's NPU output -> row-major M x N, copied (first = true) or added:
// int16 partials (int4) widened to int32 and added modulo 2^32; fp32 partials (fp16) added
// in fp32, one add per element per slice, in slice order; fp16 (one slice, DPU-converted)
// copied.
Status unpack_c_int16(std::span<const int16_t> native, const Plan& plan, std::span<int32_t> c, bool first,
                      RowRange rows = {});
Status unpack_c_fp32(std::span<const float> native, const Plan& plan, std::span<float> c, bool first,
                     RowRange rows = {});
Status unpack_c_fp16(std::span<const uint16_t> native, const Plan& plan, std::span<uint16_t> c, RowRange rows = {});

// Elements of one slice's native output (mp * np).
inline int64_t c_elements_per_slice(const Plan& plan) { return plan.mp * plan.np; }

}  // namespace ork::matmul
