// The quantised matmul, fp32 in and out: activations quantised on the host, one int32
// matmul per K-group (per-channel: one group of width K) on the device's integer path, the
// partials dequantised on the host in the order reference.h defines.
//
// Per-group scales need an integer sum per group, so each group is its own int32 matmul:
// on an NPU backend, one resident weights object per group (codes widened to int8 when
// uploaded) and one matmul context per (group, M, cores); on the cpu backend, the fast
// int8 kernel of lib/ref over each group's rows.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "driver/common/result.h"
#include "driver/kmd/kmd.h"
#include "lib/quant/activations.h"
#include "lib/quant/qweights.h"

namespace ork::quant {

struct QRunOptions {
  ActScheme act;
  int cores = 3;  // NPU cores (1..3); ignored by the cpu backend
};

// The integer matmuls over the weights' K-groups, per backend.
class GroupMatmul {
 public:
  virtual ~GroupMatmul() = default;
  // acc (M x N int32) = a_g (M x group_rows(g) int8 codes) x W_g.
  virtual Status run(int64_t g, std::span<const int8_t> a_g, int64_t m, std::span<int32_t> acc, int cores) = 0;
  // True when this backend runs int4 x int4 natively (w4a4).
  virtual bool native_int4() const = 0;
};

class QuantMatmul {
 public:
  // `kmd` null = the cpu backend. On an NPU backend the groups are made resident here.
  static Result<std::unique_ptr<QuantMatmul>> create(driver::Kmd* kmd, QuantWeights weights);
  ~QuantMatmul();

  const QuantWeights& weights() const { return weights_; }
  // C (M x N fp32, row-major) from A (M x K fp32, row-major).
  Status run(std::span<const float> a, int64_t m, std::span<float> c, const QRunOptions& options);
  // The int32 partial sum of group g for already quantised activations (M x N): what the
  // vendor's INT8 -> INT32 per-channel mode should return (ecosystem.md section 1).
  Status group_sum(const QuantActivations& qa, int64_t g, std::span<int32_t> acc, int cores);

 private:
  QuantMatmul(QuantWeights w, std::unique_ptr<GroupMatmul> backend);
  QuantWeights weights_;
  std::unique_ptr<GroupMatmul> backend_;
};

// The backends (group_matmul.cpp).
std::unique_ptr<GroupMatmul> make_cpu_group_matmul(const QuantWeights& w);
Result<std::unique_ptr<GroupMatmul>> make_npu_group_matmul(driver::Kmd& kmd, const QuantWeights& w);

}  // namespace ork::quant
