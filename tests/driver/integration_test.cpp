// Both backends over the fake kernel with the real emulated NPU (ork::emu::run_chain): an
// int8 matmul chained over two tasks per core, bit-exact against a plain loop, and the PC's
// own failures (a regcmd outside every BO, a task without CNA|CORE|DPU in op_en).
#include <cstring>

#include "driver/kmd/kmd.h"
#include "driver_fixture.h"
#include "tests/driver/emu/npu/npu_fixture.h"

namespace ork::testing {
namespace {

using driver::BoUsage;
using driver::KmdKind;
using driver::SubmitDesc;
namespace et = ork::emu::testing;

constexpr uint32_t M = 8, K = 64, N = 32;  // one 32-column weight tile per task

class RealNpu : public ::testing::TestWithParam<KmdKind> {
 protected:
  std::unique_ptr<driver::Kmd> open(emu::FakeKernel& k) { return open_kmd(k, GetParam()); }
  std::unique_ptr<driver::Kmd> open() { return open(kernel); }
  // Runs the matmul below; the number of wrong C cells, or -1 if the submit failed.
  int64_t matmul_mismatches(emu::FakeKernel& k, bool sync_a);
  emu::FakeKernel kernel;
};

// Core c's job: two chained tasks of 32 columns (weight tiles 2c and 2c + 1), their register
// commands written into the regcmd BO's pages 2c and 2c + 1 (4096 bytes each).
driver::CoreJob core_job(int core, uint64_t a_iova, uint64_t b_iova, uint64_t c_iova, driver::Bo& rc_bo) {
  driver::CoreJob job{core, {}};
  uint64_t iova0 = rc_bo.iova() + 4096 * (2 * core), iova1 = iova0 + 4096;
  std::vector<regcmd::Builder> rcb(2);
  for (int t = 1; t >= 0; --t) {  // task 1 first: its length goes into task 0's trailer
    uint32_t tile = static_cast<uint32_t>(core * 2 + t);
    et::TaskSpec spec{et::Type::int8, M, K, N, a_iova, b_iova + tile * K * N, c_iova + tile * (N / 4) * M * 16,
                      M, M};
    et::k_reduction_banks(spec);
    et::emit_body(rcb[t], spec);
    if (t == 1) {
      rcb[t].finish(0, 0);
    } else {
      rcb[t].finish(iova1, static_cast<uint32_t>(rcb[1].size_entries()));
    }
    EXPECT_TRUE(rcb[t].ok()) << rcb[t].error();
  }
  std::span<const uint64_t> t0 = rcb[0].entries(), t1 = rcb[1].entries();
  std::memcpy(rc_bo.map() + 4096 * (2 * core), t0.data(), t0.size() * 8);
  std::memcpy(rc_bo.map() + 4096 * (2 * core + 1), t1.data(), t1.size() * 8);
  job.tasks.push_back({iova0, static_cast<uint32_t>(t0.size()), ork::hw::kIntTaskDone});
  job.tasks.push_back({iova1, static_cast<uint32_t>(t1.size()), ork::hw::kIntTaskDone});
  return job;
}

// Core c computes columns [c*64, c*64+64) as two chained tasks of 32 columns each.
int64_t RealNpu::matmul_mismatches(emu::FakeKernel& k, bool sync_a) {
  auto kmd = open(k);
  const uint32_t cols = 3 * 2 * N;
  auto a = et::random_i8(M * K, 1);
  auto b = et::random_i8(K * cols, 2);
  auto a_bo = kmd->bo_create(M * K, BoUsage::data);
  auto b_bo = kmd->bo_create(K * cols, BoUsage::data);
  auto c_bo = kmd->bo_create(M * cols * 4, BoUsage::data);
  auto rc_bo = kmd->bo_create(6 * 4096, BoUsage::regcmd);
  auto packed_a = et::pack_a_i8(a, M, K);
  auto packed_b = et::pack_b_i8(b, K, cols);  // N/32 tiles of K x 32: tile t at t*K*32
  std::memcpy((*a_bo)->map(), packed_a.data(), packed_a.size());
  std::memcpy((*b_bo)->map(), packed_b.data(), packed_b.size());
  SubmitDesc desc;
  for (int core = 0; core < 3; ++core) {
    desc.jobs.push_back(core_job(core, (*a_bo)->iova(), (*b_bo)->iova(), (*c_bo)->iova(), **rc_bo));
  }
  desc.in_bos = {a_bo->get(), b_bo->get(), rc_bo->get()};
  desc.out_bos = {c_bo->get()};
  for (auto* bo : {a_bo->get(), b_bo->get(), rc_bo->get()}) {
    if (bo != a_bo->get() || sync_a) {
      EXPECT_TRUE(kmd->bo_sync(*bo, driver::SyncDir::to_device).ok());
    }
  }
  auto r = kmd->submit(desc);
  EXPECT_TRUE(r.ok()) << r.error().message;
  if (!r.ok()) return -1;
  EXPECT_EQ(r->tasks_completed, 6u);
  EXPECT_TRUE(kmd->bo_sync(**c_bo, driver::SyncDir::from_device).ok());
  auto ref = et::ref_matmul_i32(a, b, M, K, cols);
  std::vector<uint8_t> c((*c_bo)->map(), (*c_bo)->map() + M * cols * 4);
  int64_t wrong = 0;
  for (uint32_t m = 0; m < M; ++m) {
    for (uint32_t n = 0; n < cols; ++n) wrong += et::c_at<int32_t>(c, M, m, n) != ref[m * cols + n];
  }
  return wrong;
}

TEST_P(RealNpu, ChainedInt8MatmulOnThreeCoresIsExact) {
  EXPECT_EQ(matmul_mismatches(kernel, true), 0);
}

// With the cache model, the backend's syncs carry the data: the same run is exact, and the
// run that skips A's TO_DEVICE sync computes with a zero A (every cell wrong: B is random).
TEST_P(RealNpu, CacheModelExactWithSyncsWrongWithout) {
  emu::FakeKernelConfig cfg;
  cfg.model_caches = true;
  emu::FakeKernel synced(cfg), unsynced(cfg);
  EXPECT_EQ(matmul_mismatches(synced, true), 0);
  EXPECT_GT(matmul_mismatches(unsynced, false), int64_t{M} * 3 * 2 * N / 2);
}

TEST_P(RealNpu, PcFailuresComeBackAsErrors) {
  auto kmd = open();
  auto rc_bo = kmd->bo_create(4096, BoUsage::regcmd);
  auto out = kmd->bo_create(4096, BoUsage::data);
  // A task whose op_en lacks CNA|CORE|DPU never raises its interrupt: a wedge.
  regcmd::Builder b;
  b.finish(0, 0, /*op_en=*/0x1);  // CNA only
  std::vector<uint64_t> t(b.entries().begin(), b.entries().end());
  t.insert(t.begin(), 2, regcmd::kPadding);  // a body of padding: the task is 6 entries
  std::memcpy((*rc_bo)->map(), t.data(), t.size() * 8);
  SubmitDesc d;
  d.jobs = {{0, {{(*rc_bo)->iova(), static_cast<uint32_t>(t.size()), ork::hw::kIntTaskDone}}}};
  d.out_bos = {out->get()};
  auto wedged = kmd->submit(d);
  ASSERT_FALSE(wedged.ok());
  EXPECT_EQ(wedged.error().code, -ETIMEDOUT);
  // The regcmd fetch runs off the end of its BO: a DMA read error.
  d.jobs[0].tasks[0].regcmd_iova = (*rc_bo)->iova() + 4096 - 16;
  auto dma = kmd->submit(d);
  ASSERT_FALSE(dma.ok());
  EXPECT_EQ(dma.error().code, -EIO);
}

INSTANTIATE_TEST_SUITE_P(BothInterfaces, RealNpu,
                         ::testing::Values(KmdKind::rknpu, KmdKind::rocket), [](const auto& info) {
                           return std::string(driver::kmd_kind_name(info.param));
                         });

}  // namespace
}  // namespace ork::testing
