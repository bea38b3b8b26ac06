// The board projection (lib/exec/project.h): its parts add up to the plan (device = the
// timing model's time of every matmul, host = the given time per call, I/O = the streamed
// bytes at the disk rate, step = max(I/O, device + host)), the residency rule, the batch
// groups, bad options named, and the host time measured on the zero-work emulator.
#include <gtest/gtest.h>

#include "driver/emu/kernel/fake_kernel.h"
#include "lib/api/device.h"
#include "lib/exec/board_plan.h"
#include "lib/exec/pack_file.h"
#include "lib/exec/exec_plan.h"
#include "lib/exec/fusion.h"
#include "lib/exec/project.h"
#include "driver/emu/kernel/zero_work.h"

namespace ork::exec {
namespace {

ModelDesc project_desc(const char* name, int layers, matmul::DType dtype = matmul::DType::int8) {
  auto d = synthetic_desc(name, layers, dtype);
  EXPECT_TRUE(d);
  return *d;
}

ProjectOptions project_options(const ModelDesc& d, int64_t m, uint64_t budget) {
  ProjectOptions o;
  o.m = m;
  o.budget_bytes = budget;
  o.window_bytes = uint64_t{1} << 32;
  o.disk_bytes_per_s = 1.2e9;
  for (size_t j = 0; j < d.matmuls.size(); ++j) o.host_ns.push_back(1000.0 * static_cast<double>(j + 1));
  return o;
}

TEST(Project, PartsAddUpToThePlan) {
  for (const char* name : {"tiny", "qwen2.5-1.5b"}) {
    for (int64_t m : {int64_t{1}, int64_t{128}}) {
      const ModelDesc d = project_desc(name, 5);
      const ProjectOptions o = project_options(d, m, uint64_t{1} << 40);
      auto p = project(d, o);
      ASSERT_TRUE(p) << p.error().message;
      double device = 0, host = 0;
      uint64_t bytes = 0;
      for (size_t j = 0; j < d.matmuls.size(); ++j) {
        const MatmulDesc& md = d.matmuls[j];
        device += static_cast<double>(modelled_matmul_ns(d.dtype, m, md.k, md.n, 3));
        host += o.host_ns[j];
        bytes += align_up(*packed_bytes(d.dtype, md.k, md.n), kPackAlign);
        EXPECT_EQ(p->per_matmul[j].device_ns, modelled_matmul_ns(d.dtype, m, md.k, md.n, 3));
      }
      EXPECT_DOUBLE_EQ(p->split_each.device_ns, device * 5);
      double groups = 0;
      int64_t tasks = 0, submits = 0;
      for (const BatchGroup& g : p->groups) {
        groups += static_cast<double>(g.device_ns);
        tasks += g.tasks;
        submits += g.submits;
      }
      EXPECT_DOUBLE_EQ(p->device_ns, groups * 5);  // the board plan: its groups, every layer
      EXPECT_EQ(p->tasks_per_layer, tasks);
      EXPECT_EQ(p->tasks, tasks * 5);
      EXPECT_EQ(p->submits, submits * 5);
      EXPECT_LE(p->device_ns, p->split_each.device_ns);
      EXPECT_EQ(p->windows, 1);
      EXPECT_DOUBLE_EQ(p->dram_floor_ns + p->submit_ns + p->fixed_ns, p->device_ns);
      EXPECT_DOUBLE_EQ(p->host_ns, host * 5);
      EXPECT_EQ(p->weight_bytes, bytes * 5);
      EXPECT_TRUE(p->resident);
      EXPECT_EQ(p->streamed_bytes, 0u);
      EXPECT_DOUBLE_EQ(p->io_ns, 0);
      EXPECT_DOUBLE_EQ(p->compute_ns, p->device_ns + p->host_exposed_ns);  // the schedule's exposed part (overlap.h)
      EXPECT_DOUBLE_EQ(p->host_exposed_ns + p->host_overlapped_ns, p->host_ns);
      EXPECT_DOUBLE_EQ(p->step_ns, p->compute_ns);
      EXPECT_DOUBLE_EQ(p->tokens_per_s, static_cast<double>(m) * 1e9 / p->step_ns);
      EXPECT_EQ(p->split_each.submits, 7 * 5);
      EXPECT_GE(p->submits, 4 * 5);  // one per core with work per group: 4 groups a layer
      EXPECT_LE(p->submits, 4 * 3 * 2 * 5);  // a group in two row pieces submits twice
      // The other end of the fixed cost's split: the same plan, its own figures.
      EXPECT_GT(p->per_submit.device_ns, p->dram_floor_ns);
      EXPECT_DOUBLE_EQ(p->per_submit.step_ns, p->per_submit.device_ns + p->per_submit.host_exposed_ns);
      EXPECT_GT(p->device_ns, p->dram_floor_ns);  // no plan beats the shared DRAM limit
    }
  }
}

TEST(Project, StreamedWhenOverTheBudgetOrTheWindow) {
  const ModelDesc d = project_desc("qwen2.5-1.5b", 8);
  auto whole = project(d, project_options(d, 1, uint64_t{1} << 40));
  ASSERT_TRUE(whole);
  const uint64_t layer = whole->weight_bytes / 8;
  const uint64_t budget = 5 * layer;  // room for 5 layers: 2 are slots, 3 stay pinned
  auto p = project(d, project_options(d, 1, budget));
  ASSERT_TRUE(p);
  EXPECT_FALSE(p->resident);
  EXPECT_EQ(p->resident_bytes, 3 * layer);
  EXPECT_EQ(p->streamed_bytes, 5 * layer);
  EXPECT_DOUBLE_EQ(p->io_ns, static_cast<double>(5 * layer) / 1.2e9 * 1e9);
  EXPECT_DOUBLE_EQ(p->step_ns, std::max(p->io_ns, p->compute_ns));
  EXPECT_DOUBLE_EQ(p->sequential_ns, p->io_ns + p->compute_ns);
  // One window bounds it the same way as the budget.
  ProjectOptions o = project_options(d, 1, uint64_t{1} << 40);
  o.window_bytes = budget;
  o.max_windows = 1;
  auto w = project(d, o);
  ASSERT_TRUE(w);
  EXPECT_EQ(w->streamed_bytes, p->streamed_bytes);
  EXPECT_EQ(w->windows, 1);
  // Several windows hold it resident, 5 whole layers in the first and 3 in the second, each
  // entered once a step at the assumed switch cost.
  o.max_windows = 2;
  auto two = project(d, o);
  ASSERT_TRUE(two);
  EXPECT_TRUE(two->resident);
  EXPECT_EQ(two->windows, 2);
  EXPECT_EQ(two->streamed_bytes, 0u);
  EXPECT_EQ(two->window_switches, 2);
  EXPECT_DOUBLE_EQ(two->compute_ns, two->device_ns + two->host_ns + 2 * kWindowSwitchNs);
  o.window_bytes = 2 * layer + layer / 2;  // 2 whole layers a window: 4 windows, more than 2
  auto four = project(d, o);
  ASSERT_TRUE(four);
  EXPECT_FALSE(four->resident);
  EXPECT_EQ(four->windows, 1);
  // Less room than two layers: everything streams.
  auto none = project(d, project_options(d, 1, layer));
  ASSERT_TRUE(none);
  EXPECT_EQ(none->resident_bytes, 0u);
  EXPECT_EQ(none->streamed_bytes, whole->weight_bytes);
}

TEST(Project, SevenBIsLargerThanTheWindowAtInt8) {
  ProjectOptions o = project_options(project_desc("7b", 28), 1, uint64_t{1} << 40);
  o.max_windows = 1;
  auto p = project(project_desc("7b", 28), o);
  ASSERT_TRUE(p);
  EXPECT_GT(p->weight_bytes, uint64_t{1} << 32);
  EXPECT_FALSE(p->resident);  // one window: streamed from disk every token
  EXPECT_GT(p->io_ns, 0);
  // Held in RAM over two windows (18 layers of 222 MiB in the first, 10 in the second): no
  // bytes read per token, two switches a token.
  auto r = project(project_desc("7b", 28), project_options(project_desc("7b", 28), 1, uint64_t{14} << 30));
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->resident);
  EXPECT_EQ(r->windows, 2);
  EXPECT_EQ(r->io_ns, 0);
  EXPECT_EQ(r->window_switches, 2);
  EXPECT_GT(r->tokens_per_s, 5 * p->tokens_per_s);
}

TEST(Project, BatchGroupsShareAnInput) {
  const ModelDesc d = project_desc("tiny", 1);
  const auto g = batch_groups(d);
  ASSERT_EQ(g.size(), 4u);  // q k v | o | gate up | down
  EXPECT_EQ(g[0].matmuls, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(g[1].matmuls, (std::vector<int>{3}));
  EXPECT_EQ(g[2].matmuls, (std::vector<int>{4, 5}));
  EXPECT_EQ(g[3].matmuls, (std::vector<int>{6}));
  auto p = project(d, project_options(d, 1, uint64_t{1} << 40));
  ASSERT_TRUE(p);
  // Each group is its board plan (board_plan.h). tiny's k and v (64 x 32 int8) pack to 2 KiB,
  // not a whole slot's 4 KiB, so the executor cannot lay q/k/v side by side: no fused plan
  // competes (fusion.h fusion_fits), though the chooser would take one.
  const std::pair<int64_t, int64_t> qkv[] = {{d.matmuls[0].k, d.matmuls[0].n}, {d.matmuls[1].k, d.matmuls[1].n},
                                             {d.matmuls[2].k, d.matmuls[2].n}};
  std::vector<uint64_t> bytes;
  for (const auto& [k, n] : qkv) bytes.push_back(*packed_bytes(d.dtype, k, n));
  EXPECT_EQ(bytes[1], 2048u);
  EXPECT_FALSE(fusion_fits(d.dtype, 1, qkv, {}, bytes, kPackAlign));
  auto fused = plan_group(d.dtype, 1, qkv, 3, {}, {}, true);
  ASSERT_TRUE(fused);
  EXPECT_TRUE(fused->fused);
  auto qkv_plan = plan_group(d.dtype, 1, qkv, 3);
  ASSERT_TRUE(qkv_plan);
  EXPECT_EQ(p->groups[0].device_ns, static_cast<int64_t>(qkv_plan->device_ns));
  EXPECT_EQ(p->groups[0].tasks, qkv_plan->tasks);
  EXPECT_EQ(p->groups[0].fused, qkv_plan->fused);
}

// The board plan fuses the groups the executor runs fused (its default): at Qwen2.5-1.5B
// int8 decode q/k/v and gate/up each one fused matmul of 3 tasks, 12 tasks a layer (down in
// three K-slices of at most 3072, one a core); with fusion off (ork_run --no-fuse) none, 16
// tasks a layer and more modelled time.
TEST(Project, TheBoardPlanFusesAsTheExecutorDoes) {
  const ModelDesc d = project_desc("qwen2.5-1.5b", 28);
  ProjectOptions o = project_options(d, 1, uint64_t{1} << 40);
  auto p = project(d, o);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->tasks_per_layer, 12);
  EXPECT_EQ(p->tasks, 12 * 28);
  for (const BatchGroup& g : p->groups) {
    EXPECT_EQ(g.fused, g.matmuls.size() > 1);
    if (g.fused) {
      EXPECT_EQ(g.tasks, 3);
    }
  }
  o.fuse = false;
  auto plain = project(d, o);
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->tasks_per_layer, 16);
  for (const BatchGroup& g : plain->groups) EXPECT_FALSE(g.fused);
  EXPECT_LT(p->device_ns, plain->device_ns);
  EXPECT_GT(p->tokens_per_s, plain->tokens_per_s);
}

// A fused group runs in the row pieces its members run in (fusion.h fusion_fits), at every M.
TEST(Project, FusedGroupsRunInTheirMembersPieces) {
  for (int64_t m : {int64_t{1}, int64_t{128}, int64_t{512}})
    for (matmul::DType dtype : {matmul::DType::int8, matmul::DType::fp16, matmul::DType::int4}) {
      const ModelDesc d = project_desc("qwen2.5-1.5b", 2, dtype);
      auto p = project(d, project_options(d, m, uint64_t{1} << 40));
      ASSERT_TRUE(p) << p.error().message;
      for (const BatchGroup& g : p->groups) {
        if (!g.fused) continue;
        std::vector<std::pair<int64_t, int64_t>> shapes;
        for (int j : g.matmuls) shapes.emplace_back(d.matmuls[static_cast<size_t>(j)].k, d.matmuls[static_cast<size_t>(j)].n);
        EXPECT_EQ(g.pieces, row_pieces(dtype, m, shapes)) << "M = " << m;
      }
    }
}

// 7B int4 prefill at 1216-wide slices (64 rows a tile): at M = 128 every group runs in two
// row pieces, q/k/v and gate/up fused in both (three K-slices each), each piece's host part
// the fused call's at 64 rows (half_fused_host_parts), in fewer tasks than unfused.
TEST(Project, Int4GroupsOfSeveralSlicesFuseInTwoPieces) {
  const ModelDesc d = project_desc("7b", 2, matmul::DType::int4);
  ProjectOptions o = project_options(d, 128, uint64_t{1} << 40);
  o.slice_k.assign(d.matmuls.size(), 1216);
  o.fused_host_parts.assign(d.matmuls.size(), {1e6, 0});
  o.half_fused_host_parts.assign(d.matmuls.size(), {3e5, 7});
  auto p = project(d, o);
  ASSERT_TRUE(p) << p.error().message;
  int fused = 0;
  for (const BatchGroup& g : p->groups) {
    if (!g.fused) continue;
    ++fused;
    EXPECT_EQ(g.pieces, 2);
    EXPECT_EQ(g.host_ns, 3e5 + 7);  // one call a piece, at 64 rows
  }
  EXPECT_EQ(fused, 2);
  o.fuse = false;
  auto plain = project(d, o);
  ASSERT_TRUE(plain) << plain.error().message;
  EXPECT_LT(p->tasks_per_layer, plain->tasks_per_layer);
}

// A fused group's host part is its one call's (ProjectOptions::fused_host_parts: A packed
// once, one C), not its members' calls summed: at Qwen2.5-1.5B int8 decode q/k/v and
// gate/up fuse, o and down keep their own; without the fused calls' parts, or with fusion
// off, every group costs its members' calls.
TEST(Project, AFusedGroupCostsItsOneCall) {
  const ModelDesc d = project_desc("qwen2.5-1.5b", 28);
  ProjectOptions o = project_options(d, 1, uint64_t{1} << 40);
  double members = 0;  // a layer's calls, each alone
  for (size_t j = 0; j < d.matmuls.size(); ++j) {
    o.fused_host_parts.push_back({100e3 + static_cast<double>(j), 7});  // unlike any sum of host_ns
    members += o.host_ns[j];
  }
  auto p = project(d, o);
  ASSERT_TRUE(p) << p.error().message;
  double layer = 0;
  int fused = 0;
  for (const BatchGroup& g : p->groups) {
    double calls = 0;
    for (int j : g.matmuls) calls += o.host_ns[static_cast<size_t>(j)];
    const double want = g.fused ? o.fused_host_parts[static_cast<size_t>(g.matmuls.front())].total_ns() : calls;
    EXPECT_DOUBLE_EQ(g.host_ns, want);
    fused += g.fused ? 1 : 0;
    layer += want;
  }
  EXPECT_EQ(fused, 2);
  EXPECT_DOUBLE_EQ(p->host_ns, layer * 28);
  EXPECT_DOUBLE_EQ(p->host_exposed_ns + p->host_overlapped_ns, p->host_ns);
  ProjectOptions summed = o;
  summed.fused_host_parts.clear();
  auto s = project(d, summed);
  ASSERT_TRUE(s);
  EXPECT_DOUBLE_EQ(s->host_ns, members * 28);
  EXPECT_NE(s->host_ns, p->host_ns);
  o.fuse = false;
  auto off = project(d, o);
  ASSERT_TRUE(off);
  EXPECT_DOUBLE_EQ(off->host_ns, members * 28);
}

TEST(Project, BadOptionsAreNamed) {
  const ModelDesc d = project_desc("tiny", 2);
  auto expect_error = [&](ProjectOptions o, const char* text) {
    auto p = project(d, o);
    ASSERT_FALSE(p);
    EXPECT_NE(p.error().message.find(text), std::string::npos) << p.error().message;
  };
  ProjectOptions o = project_options(d, 1, 1 << 20);
  o.m = 0;
  expect_error(o, "m = 0");
  o = project_options(d, 1, 1 << 20);
  o.cores = 4;
  expect_error(o, "cores = 4");
  o = project_options(d, 1, 1 << 20);
  o.disk_bytes_per_s = 0;
  expect_error(o, "disk rate");
  o.disk_bytes_per_s = std::numeric_limits<double>::quiet_NaN();
  expect_error(o, "disk rate");
  o = project_options(d, 1, 1 << 20);
  o.host_ns.pop_back();
  expect_error(o, "6 given for 7 matmuls");
  o = project_options(d, 1, 1 << 20);
  o.host_ns[0] = -1;
  expect_error(o, "host time -1");
  o = project_options(d, 1, 1 << 20);
  o.fused_host_parts.assign(3, {});
  expect_error(o, "host parts: 3 given for 7 matmuls");
}

TEST(Project, HostTimeOnTheZeroWorkEmulator) {
  emu::FakeKernelConfig cfg;
  cfg.executor = emu::zero_work_executor();
  auto dev = api::open_emulator(driver::KmdKind::rknpu, cfg);
  ASSERT_TRUE(dev);
  const ModelDesc d = project_desc("tiny", 1);
  int submits = 0;
  auto h = measure_host_ns(api::exec_device(**dev, 3), d, 4, 3, &submits);
  ASSERT_TRUE(h) << h.error().message;
  ASSERT_EQ(h->size(), d.matmuls.size());
  for (double v : *h) EXPECT_GT(v, 0);
  EXPECT_GE(submits, 1);
  auto none = measure_host_ns(DeviceRef{}, d, 1, 3);
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message.find("needs an NPU device"), std::string::npos);
  auto zero = measure_host_ns(api::exec_device(**dev, 3), d, 1, 0);
  ASSERT_FALSE(zero);
  // The fused calls: measured at each group's first member where the group may fuse (the
  // small model's q/k/v and gate/up: every member a whole number of 4 KiB), nothing elsewhere.
  const ModelDesc small = project_desc("small", 1);
  auto f = measure_fused_host_parts(api::exec_device(**dev, 3), small, 1, 3);
  ASSERT_TRUE(f) << f.error().message;
  ASSERT_EQ(f->size(), small.matmuls.size());
  for (size_t j = 0; j < small.matmuls.size(); ++j) {
    const std::string& name = small.matmuls[j].name;
    const bool leads = name == "q" || name == "gate";
    EXPECT_EQ((*f)[j].total_ns() > 0, leads) << name;
  }
  auto tiny = measure_fused_host_parts(api::exec_device(**dev, 3), d, 1, 3);  // k's 2 KiB part q/k/v, gate's 10 KiB gate/up
  ASSERT_TRUE(tiny);
  for (const HostParts& h : *tiny) EXPECT_EQ(h.total_ns(), 0);
}

// int4 groups of several K-slices are measured fused where their pieces (fusion.h
// fused_pieces) are whole 4 KiB: at K = 1024 in two slices of 512, q/k/v and gate/up, at
// M = 1 (the one call stacked: the C API's chooser, layout_host.h unpack_c_columns) and 128.
// At the small model's K = 512 in slices of 480 and 32 none is (k's 32-deep slice is 2 KiB,
// gate's 480-deep one 330 KiB), at M = 1 and 128 alike.
TEST(Project, FusedHostPartsOfSeveralKSlices) {
  emu::FakeKernelConfig cfg;
  cfg.executor = emu::zero_work_executor();
  auto dev = api::open_emulator(driver::KmdKind::rknpu, cfg);
  ASSERT_TRUE(dev);
  const ModelDesc four = project_desc("small", 1, matmul::DType::int4);
  ModelDesc wide = four;  // hidden 1024
  wide.hidden = 1024;
  for (MatmulDesc& md : wide.matmuls) {
    md.k = md.name == "down" ? md.k : 1024;
    md.n = md.name == "q" || md.name == "o" || md.name == "down" ? 1024 : md.n;
  }
  const std::vector<int64_t> w480(four.matmuls.size(), 480), w512(wide.matmuls.size(), 512);
  for (int64_t m : {1, 128}) {
    auto none = measure_fused_host_parts(api::exec_device(**dev, 3), four, m, 1, w480);
    ASSERT_TRUE(none) << "M = " << m << ": " << none.error().message;
    for (const HostParts& h : *none) EXPECT_EQ(h.total_ns(), 0) << "M = " << m;
    auto some = measure_fused_host_parts(api::exec_device(**dev, 3), wide, m, 1, w512);
    ASSERT_TRUE(some) << "M = " << m << ": " << some.error().message;
    for (size_t j = 0; j < wide.matmuls.size(); ++j) {
      const std::string& name = wide.matmuls[j].name;
      EXPECT_EQ((*some)[j].total_ns() > 0, name == "q" || name == "gate") << "M = " << m << " " << name;
    }
  }
}

}  // namespace
}  // namespace ork::exec
