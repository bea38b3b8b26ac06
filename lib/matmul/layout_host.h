// The per-call host layout work of every dtype, written once: A into the feature buffer and
// a slice group's NPU outputs into C. Every dtype's feature atom and output atom is 16 bytes
// (docs/regcmd-contract.md section 2), so one byte-level packer and one atom-level unpacker
// serve int8, fp16 and int4: loops over 16-byte atoms in 8-row blocks, no per-element index
// call, on two threads for big matrices (lib/ref's kept workers).
//
// The index functions of layout.h stay the specification; tests/lib/matmul/layout_host_test.cpp
// checks these loops against them for every dtype.
#pragma once

#include <cstdint>
#include <span>

#include "driver/common/result.h"
#include "lib/matmul/layout.h"
#include "lib/matmul/plan.h"

namespace ork::matmul {

// ---- Row kernels: one thread, rows [first, last) of A or C (the callers check sizes).

// Row-major rows of `row_bytes` bytes -> (kp_bytes/16, mp, 16) native atoms, K padding zero.
// int8: row_bytes = K; fp16: 2K; int4 with even K: K/2 (the rows start on whole bytes).
void pack_atom_rows(const uint8_t* a, int64_t row_bytes, int64_t mp, int64_t kp_bytes, uint8_t* out,
                    int64_t first, int64_t last);
// int4 A of any K: a row starting on a high nibble (odd K, odd m) is realigned to whole bytes.
void pack_int4_rows(const uint8_t* a, int64_t k, int64_t mp, int64_t kp, uint8_t* out, int64_t first,
                    int64_t last);

// The native outputs of `count` K-slices (each (np/c2, mp, c2), c2 = 16 bytes / element) ->
// row-major C: C = s0 + s1 + ... when `first`, else C + s0 + s1 + ..., added per element in
// slice order (int: modulo 2^32; fp32: one fp32 add per slice, as the oracle). One pass over C
// whatever the slice count.
void unpack_rows(const int32_t* const* slices, int64_t count, const Plan& plan, int32_t* c, bool first,
                 int64_t r0, int64_t r1);
void unpack_rows(const int16_t* const* slices, int64_t count, const Plan& plan, int32_t* c, bool first,
                 int64_t r0, int64_t r1);
void unpack_rows(const float* const* slices, int64_t count, const Plan& plan, float* c, bool first,
                 int64_t r0, int64_t r1);
// fp16 C converted on the NPU (one slice): a copy.
void unpack_rows(const uint16_t* const* slices, int64_t count, const Plan& plan, uint16_t* c, bool first,
                 int64_t r0, int64_t r1);

// Rows [first, last) of an M-row range (end -1: to the last row), clamped.
inline void clamp_rows(RowRange r, int64_t m, int64_t* first, int64_t* last) {
  *first = r.begin < 0 ? 0 : (r.begin > m ? m : r.begin);
  *last = r.end < 0 ? m : (r.end < *first ? *first : (r.end > m ? m : r.end));
}

// ---- Per dtype (the dtype table's pack_a_rows and unpack_c, dtype.h).
void pack_a_rows_bytes(const Plan& plan, const uint8_t* a, uint8_t* out, int64_t first, int64_t last);  // int8, fp16
void pack_a_rows_int4(const Plan& plan, const uint8_t* a, uint8_t* out, int64_t first, int64_t last);
Status unpack_c_int8_group(const Plan& plan, std::span<const uint8_t* const> slices, bool copy, void* c,
                           std::span<float> acc);
Status unpack_c_int4_group(const Plan& plan, std::span<const uint8_t* const> slices, bool copy, void* c,
                           std::span<float> acc);
Status unpack_c_fp16_group(const Plan& plan, std::span<const uint8_t* const> slices, bool copy, void* c,
                           std::span<float> acc);

// ---- The per-call entry points (lib/matmul/execute.cpp), threaded.

// A in the call's format (int8; fp16 bit patterns; the packed int4 stream) into `out`
// (plan.a_bytes() bytes), on two threads when A is big.
Status pack_a_native(const Plan& plan, const void* a, std::span<uint8_t> out);

// The outputs of one slice group, `slices[i]` holding slice first + i (each
// plan.c_bytes_per_slice() bytes), into C in one pass: copied when the group holds slice 0,
// else added. C: int32 (int8, int4), fp32 (fp16), fp16 when the NPU converted (one slice);
// an fp16 C from several slices goes to `acc` (fp32, M x N), rounded once by the caller.
Status unpack_c_group(const Plan& plan, std::span<const uint8_t* const> slices, int64_t first, void* c,
                      std::span<float> acc);

// unpack_c_group into each part's own C, with no M x N C between: a part's columns are the
// plan's output surfaces from surface column / out_atom on (N-blocks outermost, (np/c2, mp,
// c2)), unpacked as a plan of n columns, so each part's bytes are those columns of the one
// C unpack_c_group writes. A stacked plan's one output C' (slices[0]): a part's columns of
// every diagonal block, summed as unpack_c_stacked sums them (block s's columns from C'
// column s*np + column on). Every column a whole number of out_atom(), the parts within N;
// not an fp16 C summed from several slices (its fp32 `acc` is M x N).
Status unpack_c_columns(const Plan& plan, std::span<const uint8_t* const> slices, int64_t first,
                        std::span<const ColumnPart> parts);

// A stacked plan's one output C' (plan.h, plan.c_bytes_per_slice() bytes) into C: the sum
// of its diagonal blocks, C[m, n] = sum over s of C'[s*mp + m, s*np + n], in slice order.
Status unpack_c_stacked(const Plan& plan, const uint8_t* out, void* c, std::span<float> acc);

// An fp16 C from the fp32 sums of its slices (unpack_c_group's `acc`, M x N), rounded once to
// nearest even (ork::float_to_half's bits, vectorised), on two threads when big.
Status round_c_fp16(const Plan& plan, std::span<const float> acc, uint16_t* c);

}  // namespace ork::matmul
