#include "lib/quant/qmatmul.h"

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

Status QuantMatmul::group_sum(const QuantActivations& qa, int64_t g, std::span<int32_t> acc, int cores) {
  const QuantWeights& w = weights_;
  if (qa.k != w.k()) return make_error(-EINVAL, fmt::format("A has K = {}, the weights K = {}", qa.k, w.k()));
  if (g < 0 || g >= w.groups()) return make_error(-EINVAL, fmt::format("group {}: the weights have {}", g, w.groups()));
  if (acc.size() != static_cast<size_t>(qa.m * w.n()))
    return make_error(-EINVAL, fmt::format("accumulator holds {} ints, M x N = {}", acc.size(), qa.m * w.n()));
  if (qa.scheme.bits == Bits::int4 && w.scheme().bits == Bits::int8)
    return make_error(-EINVAL, "int4 activations with int8 weights (w8a4) is not a mode: use w8a8, w4a8 or w4a4");
  if (qa.scheme.bits == Bits::int4 && !backend_->native_int4())
    return make_error(-EOPNOTSUPP, "w4a4 needs the NPU's native int4 x int4 path, which the runner does not offer "
                                   "yet (issue 7): use w4a8, or the cpu backend");
  const int64_t rows = w.group_rows(g);
  if (w.groups() == 1) return backend_->run(g, qa.codes, qa.m, acc, cores);
  std::vector<int8_t> a_g(static_cast<size_t>(qa.m * rows));
  copy_columns(qa, g * w.group_width(), rows, a_g);
  return backend_->run(g, a_g, qa.m, acc, cores);
}

Status QuantMatmul::run(std::span<const float> a, int64_t m, std::span<float> c, const QRunOptions& o) {
  const QuantWeights& w = weights_;
  const int64_t n = w.n();
  if (m < 1) return make_error(-EINVAL, fmt::format("M = {}: must be >= 1", m));
  if (c.size() != static_cast<size_t>(m * n))
    return make_error(-EINVAL, fmt::format("C holds {} floats, M x N = {}", c.size(), m * n));
  auto qa = quantise_activations(a, m, w.k(), o.act);
  if (!qa) return qa.error();
  std::vector<int32_t> acc(static_cast<size_t>(m * n));
  // Dequantisation order (reference.h): t = acc_0 * sw[0]; t = t + acc_g * sw[g] in increasing
  // g; C = t * sa. `c` holds t between groups.
  for (int64_t g = 0; g < w.groups(); ++g) {
    if (auto s = group_sum(*qa, g, acc, o.cores); !s) return s;
    const float* sw = w.scales().data() + g * n;
    for (int64_t i = 0; i < m; ++i) {
      float* row = c.data() + i * n;
      const int32_t* arow = acc.data() + i * n;
      if (g == 0)
        for (int64_t j = 0; j < n; ++j) row[j] = static_cast<float>(arow[j]) * sw[j];
      else
        for (int64_t j = 0; j < n; ++j) row[j] = row[j] + static_cast<float>(arow[j]) * sw[j];
    }
  }
  for (int64_t i = 0; i < m; ++i) {
    const float sa = qa->scale(i);
    for (int64_t j = 0; j < n; ++j) c[static_cast<size_t>(i * n + j)] *= sa;
  }
  return Status::success();
}

}  // namespace ork::quant
