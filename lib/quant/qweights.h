// Quantised weights on the host: codes (int8 one per byte, or int4 two per byte: the storage
// that halves disk and RAM traffic) and their scales, [groups][N]. Built by quantising fp32
// weights with the arithmetic of arith.h, or imported from codes an engine already has.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "driver/common/result.h"
#include "lib/quant/scheme.h"

namespace ork::quant {

class QuantWeights {
 public:
  // Quantises K x N row-major fp32 weights (all finite) with scheme `s`.
  static Result<QuantWeights> quantise(std::span<const float> w, int64_t k, int64_t n, const WeightScheme& s);
  // Takes codes as engines store them: int8 K x N row-major, or int4 nibbles (element
  // i = k*N + n in the low nibble of byte i/2 when i is even, the high one when odd), plus
  // scales [groups][N]. Codes outside [-qmax, qmax] and non-finite or negative scales are
  // refused with their position.
  static Result<QuantWeights> import(std::span<const uint8_t> codes, std::span<const float> scales, int64_t k,
                                     int64_t n, const WeightScheme& s);
  // An affine import (ggml Q4_1, docs/quantisation.md): weight = d * (code + code_offset) + m,
  // mins [groups][N] (finite, any sign), code_offset >= 0 added exactly in int32. The codes
  // and scales are checked as import() checks them under scheme `s`.
  struct Affine {
    std::span<const float> mins;  // empty: no m term
    int32_t code_offset = 0;
  };
  static Result<QuantWeights> import(std::span<const uint8_t> codes, std::span<const float> scales, int64_t k,
                                     int64_t n, const WeightScheme& s, const Affine& affine);
  // Bytes of the codes of a K x N matrix: K*N for int8, ceil(K*N/2) for int4.
  static int64_t code_bytes(Bits bits, int64_t k, int64_t n);

  int64_t k() const { return k_; }
  int64_t n() const { return n_; }
  const WeightScheme& scheme() const { return scheme_; }
  int64_t groups() const { return group_count(scheme_, k_); }
  int64_t group_width() const { return quant::group_width(scheme_, k_); }
  // K rows of group g: group_width(), or fewer for the last group when K % width != 0.
  int64_t group_rows(int64_t g) const;
  std::span<const float> scales() const { return scales_; }
  std::span<const uint8_t> codes() const { return codes_; }
  // Affine weights (Q4_1): the m term per [group][n] (empty for symmetric schemes) and the
  // offset that turns a stored code into the format's code (Q4_1: stored q - 8, offset 8).
  std::span<const float> mins() const { return mins_; }
  int32_t code_offset() const { return code_offset_; }
  bool affine() const { return !mins_.empty() || code_offset_ != 0; }
  int8_t code(int64_t row, int64_t col) const;
  // Rows [k0, k0 + rows) as int8 codes, row-major rows x N (int4 sign-extended): what the
  // NPU's int8 path reads for w4a8.
  void widen_rows(int64_t k0, int64_t rows, std::span<int8_t> out) const;

 private:
  int64_t k_ = 0, n_ = 0;
  WeightScheme scheme_;
  std::vector<float> scales_;
  std::vector<uint8_t> codes_;
  std::vector<float> mins_;
  int32_t code_offset_ = 0;
};

}  // namespace ork::quant
