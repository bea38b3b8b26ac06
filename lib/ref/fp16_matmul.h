// The fp16 matmul of the CPU backend: the oracle's order exactly (oracle.h
// matmul_fp16_sliced: per slice acc = 0.0f, k increasing, acc + a*b; slices added in order),
// vectorised over n, never over k, so no cell's sum is reordered. B is prepared once
// (`PackedFp16`: 64-column strips, each strip's K rows contiguous), the strips shared out
// over threads by the int8 path's rule (split.h). Kernels per tier, chosen at run time:
// AVX-512F and AVX2 (+FMA, F16C) hold a tile of C in registers and use FMA, which equals the
// oracle's multiply-then-add because every product of two halves is exact in fp32
// (docs/cpu-reference.md "fp16 on the cpu device"); the generic tier (any CPU, AArch64
// included) is plain C++ with a separate multiply and add (-ffp-contract=off). Cells are
// independent, so the tiling, the tier and the thread count never change a byte.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "driver/common/result.h"
#include "lib/ref/oracle.h"

namespace ork::ref {

enum class Fp16Isa { generic, avx2, avx512 };
const char* fp16_isa_name(Fp16Isa isa);
bool fp16_isa_supported(Fp16Isa isa);
std::vector<Fp16Isa> supported_fp16_isas();  // slowest first
Fp16Isa best_fp16_isa();

struct Fp16Options {
  int threads = 1;              // 0 = up to the online CPUs, by the int8 path's rule (split.h)
  int* threads_used = nullptr;  // when set: the threads the call ran on
  std::optional<Fp16Isa> isa;   // unset = best_fp16_isa(); an unsupported one is an error
};

// B (K x N halves) in the kernels' form, made once per weights: ceil(N/64) strips of K x 64
// halves, columns past N zero. Halves, not fp32: decode reads B once per call, so its
// bytes are its time; the kernels widen them on the fly (short M) or a strip's slice at a
// time into a buffer reused by every row tile (F16C's VCVTPH2PS or fp16.h: exact either way).
class PackedFp16 {
 public:
  static constexpr int64_t kStrip = 64;
  int64_t k() const { return k_; }
  int64_t n() const { return n_; }
  size_t bytes() const { return strips_.size() * sizeof(uint16_t); }
  const uint16_t* strip(int64_t s) const { return strips_.data() + s * k_ * kStrip; }

 private:
  friend Result<PackedFp16> pack_b_fp16(std::span<const uint16_t>, int64_t, int64_t);
  int64_t k_ = 0, n_ = 0;
  std::vector<uint16_t> strips_;
};

// b: K x N row-major binary16 bit patterns.
Result<PackedFp16> pack_b_fp16(std::span<const uint16_t> b, int64_t k, int64_t n);
// The values back as K x N row-major (`out` holds K*N): the cpu device's weight export.
Status unpack_b_fp16(const PackedFp16& b, std::span<uint16_t> out);

// C (M x N fp32 or fp16, row-major) = A (M x K halves, row-major) x B, in K-slices of
// `slice_k`, bit-identical to matmul_fp16_sliced (and its _to_fp16: one rounding at the end).
Status matmul_fp16_packed(std::span<const uint16_t> a, int64_t m, const PackedFp16& b, std::span<float> c,
                          int64_t slice_k, const Fp16Options& options = {});
Status matmul_fp16_packed_to_fp16(std::span<const uint16_t> a, int64_t m, const PackedFp16& b,
                                  std::span<uint16_t> c, int64_t slice_k, const Fp16Options& options = {});

// The same with B as K x N halves, prepared for this call only.
Status matmul_fp16_rows(std::span<const uint16_t> a, std::span<const uint16_t> b, std::span<float> c, Dims d,
                        int64_t slice_k, const Fp16Options& options = {});
Status matmul_fp16_rows_to_fp16(std::span<const uint16_t> a, std::span<const uint16_t> b,
                                std::span<uint16_t> c, Dims d, int64_t slice_k, const Fp16Options& options = {});

}  // namespace ork::ref
