// Activation quantisation, per call on the host: fp32 A (M x K) -> int8 codes + scales.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "driver/common/result.h"
#include "lib/quant/act_kernels.h"
#include "lib/quant/scheme.h"

namespace ork::quant {

struct QuantActivations {
  int64_t m = 0, k = 0;
  ActScheme scheme;
  std::vector<int8_t> codes;  // M x K row-major, one code per byte (int4 codes in -7..7)
  std::vector<float> scales;  // 1 (per-tensor) or M (per-row)
  float scale(int64_t row) const { return scales[scheme.per_row ? static_cast<size_t>(row) : 0]; }
};

// Refuses non-finite A with the position of the first bad element. Vectorised, on the best
// tier this CPU has (act_kernels.h); the codes and scales are the scalar definition's.
Result<QuantActivations> quantise_activations(std::span<const float> a, int64_t m, int64_t k, const ActScheme& s);
// The same on a given tier (tests force each one; it must be supported).
Result<QuantActivations> quantise_activations(std::span<const float> a, int64_t m, int64_t k, const ActScheme& s,
                                              detail::ActTier tier);
// The same into `q`, reusing its buffers: a caller that keeps one from call to call touches no
// fresh memory (a new M x K codes buffer per call cost a page fault per 4 KiB, about ten times
// the quantising itself at M = 512, K = 2048: docs/cpu-reference.md). On an error `q` holds
// nothing usable. From 1 MiB of A on lib/ref's kept threads (lib/ref/split.h's bytes rule),
// at most `threads` of them when > 0; the result is the same on any number.
Status quantise_activations(std::span<const float> a, int64_t m, int64_t k, const ActScheme& s, detail::ActTier tier,
                            QuantActivations& q, int threads = 0);
// The scalar definition, element by element in three passes (check, absmax, codes): the
// oracle the tiers are tested against.
Result<QuantActivations> quantise_activations_scalar(std::span<const float> a, int64_t m, int64_t k,
                                                     const ActScheme& s);

namespace detail {
// How many of lib/ref's kept threads a pass over A's codes takes (the quantiser's two passes,
// the fused kernel's packing of A): split.h's bytes rule on A's M x K floats, one thread per
// 1 MiB; `most` > 0 caps it (the cpu device's `cores` option: its host threads).
int a_pass_threads(int64_t m, int64_t k, int most);
// Rows a thread takes at a time in such a pass.
inline constexpr int64_t kAPassRowsPerGrab = 8;
}  // namespace detail

// Columns [k0, k0 + cols) of the codes, row-major M x cols: one K-group's feature matrix.
void copy_columns(const QuantActivations& q, int64_t k0, int64_t cols, std::span<int8_t> out);

}  // namespace ork::quant
