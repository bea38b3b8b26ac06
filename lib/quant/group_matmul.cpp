// The integer matmul of one K-group on each backend (qmatmul.h).
#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "lib/matmul/context.h"
#include "lib/matmul/run.h"
#include "lib/quant/qmatmul.h"
#include "lib/ref/fast.h"

namespace ork::quant {
namespace {

// cpu: lib/ref's fast int8 kernel (exact integer arithmetic, bit-identical to its oracle).
// int4 codes are widened per call, so host memory keeps two codes per byte.
class CpuGroupMatmul final : public GroupMatmul {
 public:
  explicit CpuGroupMatmul(const QuantWeights& w) : w_(w) {}
  Status run(int64_t g, std::span<const int8_t> a_g, int64_t m, std::span<int32_t> acc, int) override {
    const int64_t k0 = g * w_.group_width(), rows = w_.group_rows(g);
    std::span<const int8_t> b;
    if (w_.scheme().bits == Bits::int8) {
      b = {reinterpret_cast<const int8_t*>(w_.codes().data()) + k0 * w_.n(), static_cast<size_t>(rows * w_.n())};
    } else {
      widened_.resize(static_cast<size_t>(rows * w_.n()));
      w_.widen_rows(k0, rows, widened_);
      b = widened_;
    }
    return ref::matmul_int8_fast(a_g, b, acc, ref::Dims{m, rows, w_.n()});
  }
  bool native_int4() const override { return true; }  // int4 codes are exact int8 values

 private:
  const QuantWeights& w_;  // owned by the QuantMatmul that owns this backend
  std::vector<int8_t> widened_;
};

// NPU (rknpu, rocket, emu): one resident int8 weights object per group, and the matmul
// contexts of each (M, cores) built once and kept (the runner's shared 16-context cache
// would thrash at more than 16 groups).
class NpuGroupMatmul final : public GroupMatmul {
 public:
  explicit NpuGroupMatmul(driver::Kmd& kmd) : kmd_(kmd) {}
  ~NpuGroupMatmul() override { contexts_.clear(); }

  Status upload(const QuantWeights& w) {
    std::vector<int8_t> rows_i8;
    for (int64_t g = 0; g < w.groups(); ++g) {
      const int64_t rows = w.group_rows(g);
      rows_i8.resize(static_cast<size_t>(rows * w.n()));
      w.widen_rows(g * w.group_width(), rows, rows_i8);  // w4a8: int4 widened to int8 here
      auto rw = matmul::ResidentWeights::create(kmd_, matmul::DType::int8, rows, w.n(), rows_i8.data());
      if (!rw) return make_error(rw.error().code, fmt::format("group {}: {}", g, rw.error().message));
      groups_.push_back(std::move(*rw));
    }
    return Status::success();
  }

  Status run(int64_t g, std::span<const int8_t> a_g, int64_t m, std::span<int32_t> acc, int cores) override {
    auto ctx = context(g, m, cores);
    if (!ctx) return ctx.error();
    matmul::RunStats stats;
    return matmul::execute(kmd_, **ctx, a_g, acc, stats);
  }
  bool native_int4() const override { return false; }  // until the runner takes DType::int4

 private:
  // At most this many (M, cores) shapes keep contexts; the least recently used is dropped.
  static constexpr size_t kMaxShapes = 4;
  using Key = std::pair<int64_t, int>;
  struct Shape {
    std::vector<std::unique_ptr<matmul::Context>> groups;
    uint64_t last_used = 0;
  };

  Result<matmul::Context*> context(int64_t g, int64_t m, int cores) {
    auto it = contexts_.find({m, cores});
    if (it == contexts_.end()) {
      if (contexts_.size() >= kMaxShapes)
        contexts_.erase(std::min_element(contexts_.begin(), contexts_.end(), [](const auto& x, const auto& y) {
          return x.second.last_used < y.second.last_used;
        }));
      it = contexts_.emplace(Key{m, cores}, Shape{}).first;
      it->second.groups.resize(groups_.size());
    }
    it->second.last_used = ++clock_;
    auto& slot = it->second.groups[static_cast<size_t>(g)];
    if (!slot) {
      const matmul::ResidentWeights& rw = *groups_[static_cast<size_t>(g)];
      auto plan = matmul::make_plan(matmul::Shape{m, rw.k(), rw.n()},
                                    matmul::PlanOptions{.dtype = matmul::DType::int8, .cores = cores, .mc_cap = 0});
      if (!plan) return plan.error();
      auto ctx = matmul::build_context(kmd_, std::move(*plan), rw.bo());
      if (!ctx) return ctx.error();
      slot = std::move(*ctx);
    }
    return slot.get();
  }

  driver::Kmd& kmd_;
  std::vector<std::unique_ptr<matmul::ResidentWeights>> groups_;
  std::map<Key, Shape> contexts_;
  uint64_t clock_ = 0;
};

}  // namespace

std::unique_ptr<GroupMatmul> make_cpu_group_matmul(const QuantWeights& w) {
  return std::make_unique<CpuGroupMatmul>(w);
}

Result<std::unique_ptr<GroupMatmul>> make_npu_group_matmul(driver::Kmd& kmd, const QuantWeights& w) {
  auto b = std::make_unique<NpuGroupMatmul>(kmd);
  if (auto s = b->upload(w); !s) return s.error();
  return std::unique_ptr<GroupMatmul>(std::move(b));
}

}  // namespace ork::quant
