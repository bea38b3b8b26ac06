// A group of matmuls as one chained job (lib/exec/group_job.h): every member's C equals a
// plain CPU product bit for bit, on emu and emu-rocket; a kept group is reused, and past
// the byte bound the groups with no job in flight are dropped and built again when met.
#include <gtest/gtest.h>

#include <memory>
#include <random>

#include "lib/api/device.h"
#include "lib/exec/group_job.h"
#include "lib/matmul/context.h"

namespace ork::exec {
namespace {

struct Weights {
  int64_t k = 0, n = 0;
  std::vector<int8_t> w;  // K x N row-major
  std::unique_ptr<driver::Bo> bo;
};

Weights make_weights(driver::Kmd& kmd, int64_t k, int64_t n, uint32_t seed) {
  Weights w{k, n, std::vector<int8_t>(static_cast<size_t>(k * n)), nullptr};
  std::mt19937 rng(seed);
  for (auto& v : w.w) v = static_cast<int8_t>(static_cast<int>(rng() % 256) - 128);
  auto plan = matmul::make_plan({1, k, n}, {});
  EXPECT_TRUE(plan);
  auto bo = kmd.bo_create(static_cast<size_t>(plan->b_bytes()), driver::BoUsage::data);
  EXPECT_TRUE(bo);
  w.bo = std::move(*bo);
  EXPECT_TRUE(matmul::pack_weights(*plan, w.w.data(), {w.bo->map(), static_cast<size_t>(plan->b_bytes())}));
  EXPECT_TRUE(kmd.bo_sync(*w.bo, driver::SyncDir::to_device));
  return w;
}

// Runs the group at M = 2 and checks every C against the plain product.
void run_and_check(GroupJobs& jobs, const std::vector<const Weights*>& group) {
  const int64_t m = 2;
  std::vector<std::vector<int8_t>> a;
  std::vector<std::vector<int32_t>> c;
  std::vector<GroupMember> members;
  for (const Weights* w : group) {
    a.emplace_back(static_cast<size_t>(m * w->k));
    for (size_t i = 0; i < a.back().size(); ++i) a.back()[i] = static_cast<int8_t>(static_cast<int>(i * 37 % 255) - 127);
    c.emplace_back(static_cast<size_t>(m * w->n));
  }
  for (size_t j = 0; j < group.size(); ++j) members.push_back({group[j]->bo.get(), group[j]->k, group[j]->n, a[j].data(), c[j].data()});
  auto job = jobs.launch(members);
  ASSERT_TRUE(job) << job.error().message;
  ASSERT_TRUE((*job)->complete());
  for (size_t j = 0; j < group.size(); ++j) {
    const Weights& w = *group[j];
    for (int64_t r = 0; r < m; ++r)
      for (int64_t col = 0; col < w.n; ++col) {
        int32_t want = 0;
        for (int64_t kk = 0; kk < w.k; ++kk)
          want += int32_t{a[j][static_cast<size_t>(r * w.k + kk)]} * w.w[static_cast<size_t>(kk * w.n + col)];
        ASSERT_EQ(c[j][static_cast<size_t>(r * w.n + col)], want) << "matmul " << j << " row " << r << " col " << col;
      }
  }
}

TEST(GroupJobs, EveryMemberEqualsThePlainProductAndGroupsAreKeptWithinTheBound) {
  for (const char* name : {"emu", "emu-rocket"}) {
    auto dev = api::open_device(name);
    ASSERT_TRUE(dev) << dev.error().message;
    driver::Kmd& kmd = *(*dev)->backend->kmd();
    const Weights q = make_weights(kmd, 96, 160, 1), k = make_weights(kmd, 96, 32, 2), d = make_weights(kmd, 4160, 64, 3);
    GroupJobs kept(kmd, matmul::DType::int8, 2, 3);
    run_and_check(kept, {&q, &k});
    run_and_check(kept, {&d});  // K = 4160: K-slices, placed on the cores
    run_and_check(kept, {&q, &k});
    EXPECT_EQ(kept.kept(), 2u) << name;
    GroupJobs bounded(kmd, matmul::DType::int8, 2, 3, 1);  // one byte: keeps only the newest
    run_and_check(bounded, {&q, &k});
    run_and_check(bounded, {&d});
    EXPECT_EQ(bounded.kept(), 1u) << name;
    run_and_check(bounded, {&q, &k});  // built again, the same bytes
    EXPECT_EQ(bounded.kept(), 1u) << name;
  }
}

}  // namespace
}  // namespace ork::exec
