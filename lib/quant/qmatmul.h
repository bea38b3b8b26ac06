// The quantised matmul, fp32 in and out: activations quantised on the host, one int32
// matmul per K-group (per-channel: one group of width K) on the device's integer path, the
// partials dequantised on the host in the order reference.h defines.
//
// Per-group scales need an integer sum per group: on an NPU backend all groups run in one
// submit as K-slices of the group width, each slice writing its own output (group_plan.h):
// int8 for 8-bit activations (int4 codes widened when uploaded), native int4 for w4a4;
// per-channel is the runner's ordinary matmul. On the cpu backend, the fast int8 kernel of
// lib/ref over each group's rows.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>

#include "driver/common/npu_cores.h"
#include "driver/common/result.h"
#include "driver/kmd/kmd.h"
#include "lib/matmul/context.h"
#include "lib/quant/activations.h"
#include "lib/quant/qweights.h"

namespace ork::quant {

struct QRunOptions {
  ActScheme act;
  int cores = hw::kNpuCores;  // NPU cores (1..kNpuCores); ignored by the cpu backend
  int threads = 0;  // the cpu backend's host threads (the C API's cores option; 0: as the shape needs)
  // NPU backends add the call's pack, submit, wait, device and unpack figures here (the
  // C API's statistics); null = not measured. The cpu backend sets only cpu_threads.
  matmul::RunStats* stats = nullptr;
};

// Receives group g's int32 partial sums (M x N row-major), g = 0, 1, ... in increasing order.
using GroupSink = std::function<Status(int64_t g, std::span<const int32_t> acc)>;

// The integer matmuls over the weights' K-groups, per backend.
class GroupMatmul {
 public:
  virtual ~GroupMatmul() = default;
  // acc_g = qa[:, group g] x W_g for every group, handed to `sink` in increasing g, on
  // `cores` NPU cores or `threads` host threads (the backend takes the one it has).
  // `stats` (may be null): NPU backends add what they measured, the cpu one its threads.
  virtual Status run(const QuantActivations& qa, int cores, int threads, const GroupSink& sink,
                     matmul::RunStats* stats) = 0;
  // The whole multiply into fp32 C (M x N) in one pass, where the backend has one for these
  // weights (cpu, symmetric weights: group_kernel.h), on `threads` host threads; false: the
  // caller runs the groups and dequantises their sums (QuantMatmul::run).
  virtual Result<bool> multiply(const QuantActivations&, std::span<float>, int, matmul::RunStats*) { return false; }
};

class QuantMatmul {
 public:
  // On the CPU (lib/ref's int8 kernel over each group, packed here), or on the NPU behind
  // `kmd`, where the groups are made resident here. The device's backend chooses (lib/api/backend.h).
  static Result<std::unique_ptr<QuantMatmul>> create_cpu(QuantWeights weights);
  static Result<std::unique_ptr<QuantMatmul>> create_npu(driver::Kmd& kmd, QuantWeights weights);
  ~QuantMatmul();

  const QuantWeights& weights() const { return weights_; }
  // C (M x N fp32, row-major) from A (M x K fp32, row-major).
  Status run(std::span<const float> a, int64_t m, std::span<float> c, const QRunOptions& options);
  // The int32 partial sums of every group for already quantised activations, in increasing
  // group order: per-channel, what the vendor's INT8 -> INT32 mode should return
  // (airockchip/rknn-toolkit2#550; docs/hardware.md section 12).
  Status group_sums(const QuantActivations& qa, int cores, const GroupSink& sink,
                    matmul::RunStats* stats = nullptr, int threads = 0);
  // Group g's sums alone (M x N), for tests.
  Status group_sum(const QuantActivations& qa, int64_t g, std::span<int32_t> acc, int cores);

 private:
  QuantMatmul(QuantWeights w, std::unique_ptr<GroupMatmul> backend);
  QuantWeights weights_;
  std::unique_ptr<GroupMatmul> backend_;
};

// The backends (group_matmul.cpp).
Result<std::unique_ptr<GroupMatmul>> make_cpu_group_matmul(const QuantWeights& w);
Result<std::unique_ptr<GroupMatmul>> make_npu_group_matmul(driver::Kmd& kmd, const QuantWeights& w);
// Bytes of the int8 copy an NPU backend makes of K x N weights of scheme `s` at creation (int4
// codes widened; per-channel: the runner's layout, per-group: the group plan's), before the
// kernel rounds its buffer to pages. The w4a4 copy, made at the first w4a4 call, is extra.
Result<int64_t> npu_int8_copy_bytes(int64_t k, int64_t n, const WeightScheme& s);

}  // namespace ork::quant
