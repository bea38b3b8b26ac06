// The int4 models of the executor's fused-group tests whose groups take K in two slices
// (executor_fused_slices_test.cpp, executor_fused_orders_test.cpp), each written once a test
// program with its CPU reference; the options they run under; and how many fused group jobs
// a plan has (RunStats::fused_planned's count).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "lib/exec/exec_plan.h"
#include "lib/exec/pack_file.h"
#include "lib/exec/synthetic.h"
#include "tests/lib/exec/cached_model.h"
#include "tests/lib/exec/exec_util.h"

namespace ork::exec::testing {

// The small model reshaped (hidden 2W, q 512, k/v 128, intermediate 512), int4, every
// tensor packed W wide (PackWriter's explicit width; the Q4_0-shaped weights allow about
// 1400), at seed 13: q/k/v and gate/up take K = 2W in two slices, each piece (W x N / 2
// bytes) a multiple of 4 KiB. W = 512: 128 rows a tile (R(512), driver/common/cbuf_limits.h),
// so M = 128 runs in one row piece; W = 832: 64 rows, so M = 128 runs in two. Each made once
// with its CPU reference of 2 tokens per M.
using SlicedModel = CachedModel;

inline ModelDesc sliced_desc(int64_t width, int layers) {
  auto d = synthetic_desc("small", layers, matmul::DType::int4);
  EXPECT_TRUE(d);
  const int64_t h = 2 * width;
  d->name = "sliced";
  d->hidden = h;
  const std::pair<int64_t, int64_t> shapes[] = {{h, 512}, {h, 128}, {h, 128}, {512, h}, {h, 512}, {h, 512}, {512, h}};
  for (size_t j = 0; j < d->matmuls.size(); ++j) {
    d->matmuls[j].k = shapes[j].first;
    d->matmuls[j].n = shapes[j].second;
    d->matmuls[j].shift = synthetic_shift(shapes[j].first, matmul::DType::int4);
  }
  return *d;
}

inline SlicedModel* sliced_model(int64_t width, int layers) {
  static std::map<std::pair<int64_t, int>, SlicedModel> made;
  SlicedModel& s = made[{width, layers}];
  if (!s.path.empty()) return &s;
  const ModelDesc d = sliced_desc(width, layers);
  const std::string path = scratch("fused_slices_" + std::to_string(width) + "_" + std::to_string(layers) + ".ork");
  auto w = PackWriter::create(path, d);
  EXPECT_TRUE(w) << w.error().message;
  if (!w) return nullptr;
  for (int l = 0; l < d.layers; ++l)
    for (int j = 0; j < static_cast<int>(d.matmuls.size()); ++j)
      if (!w->add(l, j, synthetic_weights(d, l, j, 13).data(), {}, width)) return nullptr;
  if (!w->finish()) return nullptr;
  return s.load(path) ? &s : nullptr;
}

inline PlanOptions sliced_options(const PackedModel& model, int64_t m, bool streamed, bool fuse) {
  PlanOptions o;
  o.m = m;
  o.tokens = 2;
  o.fuse = fuse;
  // Streamed: under two layers' bytes nothing is pinned, every token reads every tensor.
  o.budget_bytes = streamed ? model.weight_bytes() * 3 / 4 : model.weight_bytes() * 2;
  return o;
}

// The plan's fused group jobs: its fused groups (a group's first member sits at its buffer's
// start) times its tokens.
inline int64_t planned_fused_jobs(const ExecPlan& plan, const PlanOptions& o) {
  int64_t n = 0;
  for (size_t t = 0; t < plan.fusion.first.size(); ++t) n += plan.fusion.fused(t) && plan.fusion.offset[t] == 0 ? 1 : 0;
  return n * o.tokens;
}

}  // namespace ork::exec::testing
