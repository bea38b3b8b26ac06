#include "lib/quant/qmatmul.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "lib/quant/dequantise.h"

namespace ork::quant {
namespace {

// s_g[m] = sum of row m's activation codes over group g, [M][groups], exact in int32 (|s_g|
// <= 128 * 127): the m term and the code offset of affine weights.
std::vector<int32_t> group_code_sums(const QuantActivations& qa, const QuantWeights& w) {
  const int64_t groups = w.groups(), width = w.group_width();
  std::vector<int32_t> s(static_cast<size_t>(qa.m * groups), 0);
  for (int64_t i = 0; i < qa.m; ++i)
    for (int64_t x = 0; x < qa.k; ++x) s[static_cast<size_t>(i * groups + x / width)] += qa.codes[static_cast<size_t>(i * qa.k + x)];
  return s;
}

Status check_mode(const QuantActivations& qa, const QuantWeights& w) {
  if (qa.scheme.bits == Bits::int4 && w.scheme().bits == Bits::int8)
    return make_error(-EINVAL, "int4 activations with int8 weights (w8a4) is not a mode: use w8a8, w4a8 or w4a4");
  return Status::success();
}

}  // namespace

QuantMatmul::QuantMatmul(QuantWeights w, std::unique_ptr<GroupMatmul> backend)
    : weights_(std::move(w)), backend_(std::move(backend)) {}
QuantMatmul::~QuantMatmul() = default;

// The group backend keeps a reference to weights_: each is built once they sit in their final place.
Result<std::unique_ptr<QuantMatmul>> QuantMatmul::create_cpu(QuantWeights weights) {
  std::unique_ptr<QuantMatmul> q(new QuantMatmul(std::move(weights), nullptr));
  auto b = make_cpu_group_matmul(q->weights_);
  if (!b) return b.error();
  q->backend_ = std::move(*b);
  return q;
}

Result<std::unique_ptr<QuantMatmul>> QuantMatmul::create_npu(driver::Kmd& kmd, QuantWeights weights) {
  std::unique_ptr<QuantMatmul> q(new QuantMatmul(std::move(weights), nullptr));
  auto b = make_npu_group_matmul(kmd, q->weights_);
  if (!b) return b.error();
  q->backend_ = std::move(*b);
  return q;
}

Status QuantMatmul::group_sums(const QuantActivations& qa, int cores, const GroupSink& sink,
                               matmul::RunStats* stats, int threads) {
  const QuantWeights& w = weights_;
  if (qa.k != w.k()) return make_error(-EINVAL, fmt::format("A has K = {}, the weights K = {}", qa.k, w.k()));
  if (auto s = check_mode(qa, w); !s) return s;
  return backend_->run(qa, cores, threads, sink, stats);
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
  // Kept per calling thread from call to call (only grown), as lib/ref's scratch pool keeps its
  // buffers, and like them not past 64 MiB: a bigger one is given back after its call.
  thread_local QuantActivations kept;
  struct GiveBack {
    ~GiveBack() {
      if (kept.codes.capacity() > (size_t{64} << 20)) kept = QuantActivations{};
    }
  } give_back;
  QuantActivations* qa = &kept;  // the caller's: a worker thread's `kept` is another
  if (auto s = quantise_activations(a, m, w.k(), o.act, detail::best_act_tier(), kept, o.threads); !s)
    return s;
  if (auto s = check_mode(*qa, w); !s) return s;
  auto fused = backend_->multiply(*qa, c, o.threads, o.stats);
  if (!fused) return fused.error();
  if (*fused) return Status::success();
  // Dequantisation order (reference.h qmatmul_codes): u_g = acc_g * sw[g] (affine: acc_g
  // first made the format's sum exactly in int32, then u_g = u_g + s_g * mn[g]); t = u_0;
  // t = t + u_g in increasing g; C = t * sa. `c` holds t between groups (symmetric weights:
  // C = t * sa is the last group's pass; affine ones take a pass of their own).
  const std::vector<int32_t> sums = w.affine() ? group_code_sums(*qa, w) : std::vector<int32_t>{};
  int64_t next = 0;  // the order is the contract: a backend must deliver 0, 1, 2, ...
  auto s = group_sums(*qa, o.cores, [&](int64_t g, std::span<const int32_t> acc) -> Status {
    if (g != next++ || acc.size() != c.size())
      return make_error(-EIO, fmt::format("internal: group {} delivered out of order or short", g));
    const float* sw = w.scales().data() + g * n;
    for (int64_t i = 0; i < m; ++i) {
      float* row = c.data() + i * n;
      const int32_t* arow = acc.data() + i * n;
      if (w.affine()) {
        const int32_t sg = sums[static_cast<size_t>(i * w.groups() + g)];
        const int32_t shift = w.code_offset() * sg;  // stored code + offset = the format's code
        const float* mn = w.mins().empty() ? nullptr : w.mins().data() + g * n;
        for (int64_t j = 0; j < n; ++j) {
          float u = static_cast<float>(arow[j] + shift) * sw[j];
          if (mn != nullptr) u = u + static_cast<float>(sg) * mn[j];
          row[j] = g == 0 ? u : row[j] + u;
        }
      } else {  // C = t x sa folded into the last group's pass
        detail::dequantise_row(g == 0, g + 1 == w.groups(), arow, sw, qa->scale(i), row, n);
      }
    }
    return Status::success();
  }, o.stats, o.threads);
  if (!s) return s;
  if (next != w.groups()) return make_error(-EIO, fmt::format("internal: {} of {} groups delivered", next, w.groups()));
  for (int64_t i = 0; i < m && w.affine(); ++i) {
    const float sa = qa->scale(i);
    for (int64_t j = 0; j < n; ++j) c[static_cast<size_t>(i * n + j)] *= sa;
  }
  return Status::success();
}

}  // namespace ork::quant
