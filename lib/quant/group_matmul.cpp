// The integer matmuls of the K-groups on each backend (qmatmul.h).
#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "lib/matmul/context.h"
#include "lib/matmul/layout.h"
#include "lib/matmul/run.h"
#include "lib/quant/group_plan.h"
#include "lib/quant/qmatmul.h"
#include "lib/ref/fast.h"

namespace ork::quant {
namespace {

// cpu: lib/ref's fast int8 kernel per group (exact integer arithmetic, bit-identical to its
// oracle). int4 codes are widened per call, so host memory keeps two codes per byte.
class CpuGroupMatmul final : public GroupMatmul {
 public:
  explicit CpuGroupMatmul(const QuantWeights& w) : w_(w) {}
  Status run(const QuantActivations& qa, int, const GroupSink& sink) override {
    const int64_t n = w_.n(), m = qa.m;
    std::vector<int32_t> acc(static_cast<size_t>(m * n));
    std::vector<int8_t> a_g, widened;
    for (int64_t g = 0; g < w_.groups(); ++g) {
      const int64_t k0 = g * w_.group_width(), rows = w_.group_rows(g);
      std::span<const int8_t> a = qa.codes;
      if (w_.groups() > 1) {
        a_g.resize(static_cast<size_t>(m * rows));
        copy_columns(qa, k0, rows, a_g);
        a = a_g;
      }
      std::span<const int8_t> b;
      if (w_.scheme().bits == Bits::int8) {
        b = {reinterpret_cast<const int8_t*>(w_.codes().data()) + k0 * n, static_cast<size_t>(rows * n)};
      } else {
        widened.resize(static_cast<size_t>(rows * n));
        w_.widen_rows(k0, rows, widened);
        b = widened;
      }
      if (auto s = ref::matmul_int8_fast(a, b, acc, ref::Dims{m, rows, n}); !s) return s;
      if (auto s = sink(g, acc); !s) return s;
    }
    return Status::success();
  }
  bool native_int4() const override { return true; }  // int4 codes are exact int8 values

 private:
  const QuantWeights& w_;  // owned by the QuantMatmul that owns this backend
};

// NPU (rknpu, rocket, emu). Per-channel: the runner's int8 matmul (its K-slices, if any, are
// added on the host). Per-group: one submit for all groups, as K-slices of the group width
// whose outputs stay apart (group_plan.h). Codes are widened to int8 when uploaded (w4a8).
// One context per (M, cores), kept for the next call.
class NpuGroupMatmul final : public GroupMatmul {
 public:
  NpuGroupMatmul(driver::Kmd& kmd, const QuantWeights& w) : kmd_(kmd), w_(w) {}
  ~NpuGroupMatmul() override { contexts_.clear(); }  // contexts reference the weight BO

  Status upload() {
    std::vector<int8_t> codes(static_cast<size_t>(w_.k() * w_.n()));
    w_.widen_rows(0, w_.k(), codes);
    if (per_channel()) {
      auto rw = matmul::ResidentWeights::create(kmd_, matmul::DType::int8, w_.k(), w_.n(), codes.data());
      if (!rw) return rw.error();
      resident_ = std::move(*rw);
      return Status::success();
    }
    auto plan = group_plan(1, w_.k(), w_.n(), w_.group_width(), 1);  // the layout: K, N, width only
    if (!plan) return plan.error();
    auto bo = kmd_.bo_create(static_cast<size_t>(plan->b_bytes()), driver::BoUsage::data);
    if (!bo) return make_error(bo.error().code, fmt::format("allocating the weight buffer: {}", bo.error().message));
    std::span<int8_t> out{reinterpret_cast<int8_t*>((*bo)->map()), static_cast<size_t>(plan->b_bytes())};
    if (auto s = matmul::pack_b_int8(codes, *plan, out); !s) return s;
    if (auto s = kmd_.bo_sync(**bo, driver::SyncDir::to_device); !s) return s;
    weights_bo_ = std::move(*bo);
    return Status::success();
  }

  Status run(const QuantActivations& qa, int cores, const GroupSink& sink) override {
    auto ctx = context(qa.m, cores);
    if (!ctx) return ctx.error();
    std::vector<int32_t> acc(static_cast<size_t>(qa.m * w_.n()));
    if (per_channel()) {
      matmul::RunStats stats;
      if (auto s = matmul::execute(kmd_, **ctx, qa.codes, acc, stats); !s) return s;
      return sink(0, acc);
    }
    return run_groups(**ctx, qa, acc, sink);
  }
  bool native_int4() const override { return false; }  // until the runner takes DType::int4

 private:
  bool per_channel() const { return w_.groups() == 1; }

  // Pack A once, submit each slice group, hand every slice's output to the sink as it comes.
  Status run_groups(const matmul::Context& x, const QuantActivations& qa, std::vector<int32_t>& acc,
                    const GroupSink& sink) {
    const matmul::Plan& p = x.plan;
    std::span<int8_t> a_native{reinterpret_cast<int8_t*>(x.a->map()), static_cast<size_t>(p.a_bytes())};
    if (auto s = matmul::pack_a_int8(qa.codes, p, a_native); !s) return s;
    if (auto s = kmd_.bo_sync(*x.a, driver::SyncDir::to_device); !s) return s;
    for (const matmul::SliceGroup& g : x.groups) {
      if (auto r = kmd_.submit(g.desc); !r) return r.error();
      for (int64_t i = 0; i < g.count; ++i) {
        const driver::Bo& cb = *x.c[static_cast<size_t>(i)];
        if (auto s = kmd_.bo_sync(cb, driver::SyncDir::from_device); !s) return s;
        std::span<const int32_t> native{reinterpret_cast<const int32_t*>(cb.map()),
                                        static_cast<size_t>(matmul::c_elements_per_slice(p))};
        if (auto s = matmul::unpack_c_int32(native, p, acc); !s) return s;
        if (auto s = sink(g.first_slice + i, acc); !s) return s;
      }
    }
    return Status::success();
  }

  // At most this many (M, cores) shapes keep contexts; the least recently used is dropped.
  static constexpr size_t kMaxShapes = 4;
  using Key = std::pair<int64_t, int>;
  struct Entry {
    std::unique_ptr<matmul::Context> ctx;
    uint64_t last_used = 0;
  };

  Result<matmul::Context*> context(int64_t m, int cores) {
    if (auto it = contexts_.find({m, cores}); it != contexts_.end()) {
      it->second.last_used = ++clock_;
      return it->second.ctx.get();
    }
    auto plan = per_channel() ? matmul::make_plan(matmul::Shape{m, w_.k(), w_.n()},
                                                  matmul::PlanOptions{.dtype = matmul::DType::int8, .cores = cores, .mc_cap = 0})
                              : group_plan(m, w_.k(), w_.n(), w_.group_width(), cores);
    if (!plan) return plan.error();
    auto ctx = matmul::build_context(kmd_, std::move(*plan), per_channel() ? resident_->bo() : *weights_bo_);
    if (!ctx) return ctx.error();
    if (contexts_.size() >= kMaxShapes)
      contexts_.erase(std::min_element(contexts_.begin(), contexts_.end(), [](const auto& x, const auto& y) {
        return x.second.last_used < y.second.last_used;
      }));
    matmul::Context* raw = ctx->get();
    contexts_.emplace(Key{m, cores}, Entry{std::move(*ctx), ++clock_});
    return raw;
  }

  driver::Kmd& kmd_;
  const QuantWeights& w_;
  std::unique_ptr<matmul::ResidentWeights> resident_;  // per-channel
  std::unique_ptr<driver::Bo> weights_bo_;             // per-group, packed by group_plan's slices
  std::map<Key, Entry> contexts_;
  uint64_t clock_ = 0;
};

}  // namespace

std::unique_ptr<GroupMatmul> make_cpu_group_matmul(const QuantWeights& w) {
  return std::make_unique<CpuGroupMatmul>(w);
}

Result<std::unique_ptr<GroupMatmul>> make_npu_group_matmul(driver::Kmd& kmd, const QuantWeights& w) {
  auto b = std::make_unique<NpuGroupMatmul>(kmd, w);
  if (auto s = b->upload(); !s) return s.error();
  return std::unique_ptr<GroupMatmul>(std::move(b));
}

}  // namespace ork::quant
