// The integer matmuls of the K-groups on each backend (qmatmul.h).
#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "lib/matmul/context.h"
#include "lib/matmul/layout.h"
#include "lib/matmul/run.h"
#include "lib/quant/dequantise.h"
#include "lib/quant/group_kernel.h"
#include "lib/quant/group_plan.h"
#include "lib/quant/qmatmul.h"
#include "lib/ref/fast.h"
#include "lib/ref/oracle.h"
#include "driver/common/int4.h"

namespace ork::quant {
namespace {

// cpu: per-group weights, symmetric or affine (ggml Q4_1), and affine weights of any width
// multiply in the fused kernel (group_kernel.h: every group's integer sums and
// dequantisation in one pass, threaded over column strips), packed for it once, when the
// weights are created. Symmetric per-channel weights (dequantised on the int8 call's threads,
// multiply_per_channel below), and the group sums alone (group_sums:
// the vendor cases' tests), take lib/ref's fast int8 kernel per group (exact integer
// arithmetic, bit-identical to its oracle; int4 codes are exact int8 values), each group's
// codes widened and packed for it once (symmetric per-channel: at creation; else on first
// use): host memory holds one packed copy beside the stored codes for the path in use.
class CpuGroupMatmul final : public GroupMatmul {
 public:
  explicit CpuGroupMatmul(const QuantWeights& w) : w_(w) {}

  Status prepare() {
    // Per-channel is one int8 matmul, its chunks dequantised on its threads: lib/ref's tuned
    // tiles beat the fused kernel there (68-75 % of the VPDPBUSD peak against 46-60 % at M = 128-512 in
    // one sequence, docs/cpu-reference.md "Every dtype at its own peak").
    if (w_.groups() == 1 && !w_.affine()) return pack_groups();
    auto p = detail::pack_group_weights(w_, detail::best_group_tier());
    if (!p) return p.error();
    fused_ = std::move(*p);
    return Status::success();
  }

  Result<bool> multiply(const QuantActivations& qa, std::span<float> c, int threads, matmul::RunStats* stats) override {
    if (!fused_) return multiply_per_channel(qa, c, threads, stats);
    int used = 0;
    if (auto s = detail::fused_qmatmul(qa, *fused_, c, {.threads = threads, .threads_used = &used}); !s)
      return s.error();
    if (stats) stats->cpu_threads = std::max(stats->cpu_threads, used);
    return true;
  }

  Status run(const QuantActivations& qa, int, int threads, const GroupSink& sink, matmul::RunStats* stats) override {
    if (packed_.empty())  // callers hold the device's queue (lib/api), so one call packs
      if (auto s = pack_groups(); !s) return s;
    const int64_t n = w_.n(), m = qa.m;
    std::vector<int32_t> acc(static_cast<size_t>(m * n));
    std::vector<int8_t> a_g;
    for (int64_t g = 0; g < w_.groups(); ++g) {
      const int64_t k0 = g * w_.group_width(), rows = w_.group_rows(g);
      std::span<const int8_t> a = qa.codes;
      if (w_.groups() > 1) {
        a_g.resize(static_cast<size_t>(m * rows));
        copy_columns(qa, k0, rows, a_g);
        a = a_g;
      }
      int used = 0;
      const ref::FastOptions fo{.threads = threads, .threads_used = &used};
      if (auto s = ref::matmul_int8_packed(a, m, packed_[static_cast<size_t>(g)], acc, fo); !s) return s;
      if (stats) stats->cpu_threads = std::max(stats->cpu_threads, used);
      if (auto s = sink(g, acc); !s) return s;
    }
    return Status::success();
  }

 private:
  // Symmetric per-channel weights: lib/ref's int8 call, each chunk of columns dequantised
  // (C = fl(fl(float(acc) x sw) x sa), reference.h with one group) by the thread that computed
  // it, at once, from its scratch (ref::matmul_int8_packed_to): threaded as the int8 call is,
  // and no M x N int32 buffer. A pass over all of C on the calling thread after the call, from
  // a fresh M x N buffer, made w8a8 about 2x int8's CPU time at M = 512 (docs/cpu-reference.md).
  Result<bool> multiply_per_channel(const QuantActivations& qa, std::span<float> c, int threads,
                                    matmul::RunStats* stats) {
    const float* sw = w_.scales().data();
    const int64_t n = w_.n();
    int used = 0;
    auto sink = [&qa, sw, c, n](int64_t n0, int64_t n1, const int32_t* sums, int64_t ld) {
      for (int64_t i = 0; i < qa.m; ++i)
        detail::dequantise_row<true, true>(sums + i * ld, sw + n0, qa.scale(i), c.data() + i * n + n0, n1 - n0);
    };
    if (auto s = ref::matmul_int8_packed_to(qa.codes, qa.m, packed_[0], sink, {.threads = threads, .threads_used = &used});
        !s)
      return s.error();
    if (stats) stats->cpu_threads = std::max(stats->cpu_threads, used);
    return true;
  }

  Status pack_groups() {
    std::vector<int8_t> codes;
    for (int64_t g = 0; g < w_.groups(); ++g) {
      const int64_t k0 = g * w_.group_width(), rows = w_.group_rows(g);
      codes.resize(static_cast<size_t>(rows * w_.n()));
      w_.widen_rows(k0, rows, codes);
      auto p = ref::pack_b_int8(codes, rows, w_.n(), ref::BOrder::row_major);
      if (!p) return p.error();
      packed_.push_back(std::move(*p));
    }
    return Status::success();
  }

  const QuantWeights& w_;  // owned by the QuantMatmul that owns this backend
  std::optional<detail::GroupPacked> fused_;  // per-group or affine weights
  // Per group: its rows' stored codes as int8, packed (affine: the sink adds the offset).
  std::vector<ref::PackedB> packed_;
};

// The layout of per-group weights in their one buffer: it depends on K, N and the group
// width only (M = 1, one core), so the buffer's size is known before any call.
Result<matmul::Plan> group_layout(int64_t k, int64_t n, int64_t width, matmul::DType dtype) {
  return group_plan(1, k, n, width, 1, dtype);
}

// NPU (rknpu, rocket, emu). Per-channel: the runner's matmul (its K-slices, if any, are
// added on the host). Per-group: one submit for all groups, as K-slices of the group width
// whose outputs stay apart (group_plan.h). Two device copies of the weights, each made on
// first use: int8 (w8a8, and w4a8 with int4 codes widened as they are uploaded), and native
// int4 for w4a4 (int4 x int4 with int16 partials; the dtypes path added within API version 1). One context
// per (M, cores) and copy, kept for the next call.
class NpuGroupMatmul final : public GroupMatmul {
 public:
  NpuGroupMatmul(driver::Kmd& kmd, const QuantWeights& w) : kmd_(kmd), w_(w) {}
  ~NpuGroupMatmul() override {
    for (Variant& v : variants_) v.contexts.clear();  // contexts reference the weight BOs
  }

  // The int8 copy is made eagerly, so a failing upload is reported by ork_qweights_create.
  Status upload_int8() { return upload(variants_[0], matmul::DType::int8); }

  Status run(const QuantActivations& qa, int cores, int, const GroupSink& sink, matmul::RunStats* stats) override {
    matmul::RunStats local;
    matmul::RunStats& st = stats ? *stats : local;
    const bool a4 = qa.scheme.bits == Bits::int4;
    Variant& v = variants_[a4 ? 1 : 0];
    const matmul::DType dtype = a4 ? matmul::DType::int4 : matmul::DType::int8;
    if (!v.uploaded)
      if (auto s = upload(v, dtype); !s) return s;
    const bool cached = v.contexts.count({qa.m, cores}) != 0;
    auto ctx = context(v, dtype, qa.m, cores);
    if (!ctx) return ctx.error();
    st.built = st.built || !cached;
    std::vector<uint8_t> packed;  // int4 A: two codes per byte, element m*K + k low nibble first
    const void* a = qa.codes.data();
    if (a4) {
      packed.assign(static_cast<size_t>((qa.codes.size() + 1) / 2), 0);
      for (size_t i = 0; i < qa.codes.size(); ++i) int4::put(packed.data(), static_cast<int64_t>(i), qa.codes[i]);
      a = packed.data();
    }
    // Every call unpacks all M x N sums over it (per group too): kept, not zeroed per call.
    std::vector<int32_t>& acc = acc_;
    acc.resize(static_cast<size_t>(qa.m * w_.n()));
    if (per_channel()) {
      if (auto s = matmul::execute_any(kmd_, **ctx, a, acc.data(), st); !s) return s;
      return sink(0, acc);
    }
    return run_groups(**ctx, a, packed.size(), qa, acc, sink, st);
  }

 private:
  struct Entry {
    std::unique_ptr<matmul::Context> ctx;
    uint64_t last_used = 0;
  };
  using Key = std::pair<int64_t, int>;
  struct Variant {
    bool uploaded = false;
    std::unique_ptr<matmul::ResidentWeights> resident;  // per-channel
    std::unique_ptr<driver::Bo> bo;                     // per-group, packed by group_plan's slices
    std::map<Key, Entry> contexts;
  };
  // At most this many (M, cores) shapes keep contexts per copy; least recently used dropped.
  static constexpr size_t kMaxShapes = 4;

  bool per_channel() const { return w_.groups() == 1; }

  Status upload(Variant& v, matmul::DType dtype) {
    // int8: codes widened to one per byte; int4: the host's packed codes as they are.
    std::vector<int8_t> widened;
    const void* codes = w_.codes().data();
    if (dtype == matmul::DType::int8) {
      widened.resize(static_cast<size_t>(w_.k() * w_.n()));
      w_.widen_rows(0, w_.k(), widened);
      codes = widened.data();
    }
    if (per_channel()) {
      auto rw = matmul::ResidentWeights::create(kmd_, dtype, w_.k(), w_.n(), codes);
      if (!rw) return rw.error();
      v.resident = std::move(*rw);
    } else {
      auto plan = group_layout(w_.k(), w_.n(), w_.group_width(), dtype);
      if (!plan) return plan.error();
      auto bo = kmd_.bo_create(static_cast<size_t>(plan->b_bytes()), driver::BoUsage::data);
      if (!bo) return make_error(bo.error().code, fmt::format("allocating the weight buffer: {}", bo.error().message));
      std::span<uint8_t> out{(*bo)->map(), static_cast<size_t>(plan->b_bytes())};
      if (auto s = matmul::pack_weights(*plan, codes, out); !s) return s;
      if (auto s = kmd_.bo_sync(**bo, driver::SyncDir::to_device); !s) return s;
      v.bo = std::move(*bo);
    }
    v.uploaded = true;
    return Status::success();
  }

  // Pack A once, submit each slice group, hand every slice's output to the sink as it comes.
  // Timed like the runner's calls (lib/matmul/context.h RunStats): pack, each submit, each unpack.
  Status run_groups(const matmul::Context& x, const void* a, size_t packed_bytes, const QuantActivations& qa,
                    std::vector<int32_t>& acc, const GroupSink& sink, matmul::RunStats& st) {
    using Clock = std::chrono::steady_clock;
    auto ns_since = [](Clock::time_point t0) {
      return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count();
    };
    const matmul::Plan& p = x.plan;
    auto t0 = Clock::now();
    const bool a4 = p.dtype == matmul::DType::int4;
    std::span<uint8_t> a_native{x.a().map(), static_cast<size_t>(p.a_bytes())};
    auto packed = a4 ? matmul::pack_a_int4({static_cast<const uint8_t*>(a), packed_bytes}, p, a_native)
                     : matmul::pack_a_int8(qa.codes, p, {reinterpret_cast<int8_t*>(a_native.data()), a_native.size()});
    if (!packed) return packed;
    if (auto s = kmd_.bo_sync(x.a(), driver::SyncDir::to_device); !s) return s;
    st.pack_ns += ns_since(t0);
    st.bytes_to_device += static_cast<int64_t>(x.a().size());
    st.device_ns = 0;
    const auto elements = static_cast<size_t>(matmul::c_elements_per_slice(p));
    for (const matmul::SliceGroup& g : x.groups) {
      t0 = Clock::now();
      auto r = kmd_.submit_checked(g.submit);
      const int64_t submit_ns = ns_since(t0);
      if (!r) return r.error();
      matmul::account_submit(st, *r, submit_ns);
      for (int64_t i = 0; i < g.count; ++i) {
        t0 = Clock::now();
        const driver::Bo& cb = x.c(static_cast<size_t>(i));
        if (auto s = kmd_.bo_sync(cb, driver::SyncDir::from_device); !s) return s;
        st.bytes_from_device += static_cast<int64_t>(cb.size());
        auto s = a4 ? matmul::unpack_c_int16({reinterpret_cast<const int16_t*>(cb.map()), elements}, p, acc, true)
                    : matmul::unpack_c_int32({reinterpret_cast<const int32_t*>(cb.map()), elements}, p, acc);
        if (!s) return s;
        st.unpack_ns += ns_since(t0);  // the sink's dequantisation is the caller's, not counted
        if (auto t = sink(g.first_slice + i, acc); !t) return t;
      }
    }
    return Status::success();
  }

  Result<matmul::Context*> context(Variant& v, matmul::DType dtype, int64_t m, int cores) {
    if (auto it = v.contexts.find({m, cores}); it != v.contexts.end()) {
      it->second.last_used = ++clock_;
      return it->second.ctx.get();
    }
    // Per channel: the resident's own layout (int4 slices as wide as the weights allow).
    auto plan = per_channel() ? matmul::make_plan(matmul::Shape{m, w_.k(), w_.n()},
                                                  matmul::PlanOptions{.dtype = dtype, .cores = cores, .mc_cap = 0,
                                                                      .slice_k = v.resident->slice_k()})
                              : group_plan(m, w_.k(), w_.n(), w_.group_width(), cores, dtype);
    if (!plan) return plan.error();
    auto ctx = matmul::build_context(kmd_, std::move(*plan), per_channel() ? v.resident->bo() : *v.bo);
    if (!ctx) return ctx.error();
    if (v.contexts.size() >= kMaxShapes)
      v.contexts.erase(std::min_element(v.contexts.begin(), v.contexts.end(), [](const auto& x, const auto& y) {
        return x.second.last_used < y.second.last_used;
      }));
    matmul::Context* raw = ctx->get();
    v.contexts.emplace(Key{m, cores}, Entry{std::move(*ctx), ++clock_});
    return raw;
  }

  driver::Kmd& kmd_;
  const QuantWeights& w_;
  Variant variants_[2];  // [0] int8, [1] int4
  uint64_t clock_ = 0;
  std::vector<int32_t> acc_;  // the call's int32 sums (calls hold the device's queue: one at a time)
};

}  // namespace

Result<std::unique_ptr<GroupMatmul>> make_cpu_group_matmul(const QuantWeights& w) {
  auto b = std::make_unique<CpuGroupMatmul>(w);
  if (auto s = b->prepare(); !s) return s.error();
  return std::unique_ptr<GroupMatmul>(std::move(b));
}

Result<int64_t> npu_int8_copy_bytes(int64_t k, int64_t n, const WeightScheme& s) {
  if (group_count(s, k) == 1) return matmul::ResidentWeights::packed_bytes(matmul::DType::int8, k, n);
  auto plan = group_layout(k, n, group_width(s, k), matmul::DType::int8);
  if (!plan) return plan.error();
  return plan->b_bytes();
}

Result<std::unique_ptr<GroupMatmul>> make_npu_group_matmul(driver::Kmd& kmd, const QuantWeights& w) {
  auto b = std::make_unique<NpuGroupMatmul>(kmd, w);
  if (auto s = b->upload_int8(); !s) return s.error();
  return std::unique_ptr<GroupMatmul>(std::move(b));
}

}  // namespace ork::quant
