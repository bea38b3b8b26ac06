#include "lib/quant/qmatmul.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

namespace ork::quant {

QuantMatmul::QuantMatmul(QuantWeights w, std::unique_ptr<GroupMatmul> backend)
    : weights_(std::move(w)), backend_(std::move(backend)) {}
QuantMatmul::~QuantMatmul() = default;

Result<std::unique_ptr<QuantMatmul>> QuantMatmul::create(driver::Kmd* kmd, QuantWeights weights) {
  // The backend keeps a reference to weights_: build it once they sit in their final place.
  std::unique_ptr<QuantMatmul> q(new QuantMatmul(std::move(weights), nullptr));
  if (kmd == nullptr) {
    q->backend_ = make_cpu_group_matmul(q->weights_);
  } else {
    auto b = make_npu_group_matmul(*kmd, q->weights_);
    if (!b) return b.error();
    q->backend_ = std::move(*b);
  }
  return q;
}

Status QuantMatmul::group_sums(const QuantActivations& qa, int cores, const GroupSink& sink) {
  const QuantWeights& w = weights_;
  if (qa.k != w.k()) return make_error(-EINVAL, fmt::format("A has K = {}, the weights K = {}", qa.k, w.k()));
  if (qa.scheme.bits == Bits::int4 && w.scheme().bits == Bits::int8)
    return make_error(-EINVAL, "int4 activations with int8 weights (w8a4) is not a mode: use w8a8, w4a8 or w4a4");
  return backend_->run(qa, cores, sink);
}

Status QuantMatmul::group_sum(const QuantActivations& qa, int64_t g, std::span<int32_t> acc, int cores) {
  if (g < 0 || g >= weights_.groups())
    return make_error(-EINVAL, fmt::format("group {}: the weights have {}", g, weights_.groups()));
  if (acc.size() != static_cast<size_t>(qa.m * weights_.n()))
    return make_error(-EINVAL, fmt::format("accumulator holds {} ints, M x N = {}", acc.size(), qa.m * weights_.n()));
  return group_sums(qa, cores, [&](int64_t h, std::span<const int32_t> sums) {
    if (h == g) std::copy(sums.begin(), sums.end(), acc.begin());
    return Status::success();
  });
}

Status QuantMatmul::run(std::span<const float> a, int64_t m, std::span<float> c, const QRunOptions& o) {
  const QuantWeights& w = weights_;
  const int64_t n = w.n();
  if (m < 1) return make_error(-EINVAL, fmt::format("M = {}: must be >= 1", m));
  if (c.size() != static_cast<size_t>(m * n))
    return make_error(-EINVAL, fmt::format("C holds {} floats, M x N = {}", c.size(), m * n));
  auto qa = quantise_activations(a, m, w.k(), o.act);
  if (!qa) return qa.error();
  // Dequantisation order (reference.h): t = acc_0 * sw[0]; t = t + acc_g * sw[g] in increasing
  // g; C = t * sa. `c` holds t between groups.
  int64_t next = 0;  // the order is the contract: a backend must deliver 0, 1, 2, ...
  auto s = group_sums(*qa, o.cores, [&](int64_t g, std::span<const int32_t> acc) -> Status {
    if (g != next++ || acc.size() != c.size())
      return make_error(-EIO, fmt::format("internal: group {} delivered out of order or short", g));
    const float* sw = w.scales().data() + g * n;
    for (int64_t i = 0; i < m; ++i) {
      float* row = c.data() + i * n;
      const int32_t* arow = acc.data() + i * n;
      if (g == 0)
        for (int64_t j = 0; j < n; ++j) row[j] = static_cast<float>(arow[j]) * sw[j];
      else
        for (int64_t j = 0; j < n; ++j) row[j] = row[j] + static_cast<float>(arow[j]) * sw[j];
    }
    return Status::success();
  });
  if (!s) return s;
  if (next != w.groups()) return make_error(-EIO, fmt::format("internal: {} of {} groups delivered", next, w.groups()));
  for (int64_t i = 0; i < m; ++i) {
    const float sa = qa->scale(i);
    for (int64_t j = 0; j < n; ++j) c[static_cast<size_t>(i * n + j)] *= sa;
  }
  return Status::success();
}

}  // namespace ork::quant
