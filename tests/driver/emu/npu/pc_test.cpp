// The PC: chained tasks, the trailer's pointer and amount, max_tasks, fetch faults,
// entry targets, op_en.
#include "tests/driver/emu/npu/npu_fixture.h"

namespace ork::emu::testing {
namespace {

// Three one-row tasks, each computing a different column range of the same product, laid
// out in one regcmd BO at 64-byte aligned offsets and chained by their trailers.
struct Chain {
  Device dev;
  Bo* A = nullptr;
  Bo* B = nullptr;
  Bo* C = nullptr;
  Bo* cmd = nullptr;
  std::vector<uint32_t> offsets, lengths;
  std::vector<int8_t> a, b;
  static constexpr size_t M = 4, K = 64, N = 96;

  Chain() {
    a = random_i8(M * K, 11);
    b = random_i8(K * N, 12);
    const Int8Bos bos = alloc_int8(dev, a, b, M, K, N, 0xee);
    A = &bos.A;
    B = &bos.B;
    C = &bos.C;
    cmd = &dev.alloc(4096);
    std::vector<std::vector<uint64_t>> bodies;
    uint32_t at = 0;
    for (size_t n0 = 0; n0 < N; n0 += 32) {
      TaskSpec t{.mc = M, .kt = K, .nt = 32, .a = A->iova, .b = B->iova + n0 * K,
                 .c = C->iova + (n0 / 4) * M * 16, .a_surf = M, .c_surf = M};
      k_reduction_banks(t);
      bodies.push_back(one_task(t));
      offsets.push_back(at);
      lengths.push_back(static_cast<uint32_t>(bodies.back().size()));
      at += (lengths.back() + 7) / 8 * 8;
    }
    for (size_t i = 0; i < bodies.size(); ++i) {
      if (i + 1 < bodies.size())
        regcmd::patch_next(bodies[i], cmd->iova + offsets[i + 1] * 8, lengths[i + 1]);
      std::memcpy(cmd->bytes.data() + offsets[i] * 8, bodies[i].data(), bodies[i].size() * 8);
    }
  }
  ChainResult run(uint32_t max_tasks) { return run_chain(dev.mem, 1, cmd->iova, lengths[0], max_tasks); }
  bool column_range_done(size_t n0) const {
    const auto want = ref_matmul_i32(a, b, M, K, N);
    for (size_t m = 0; m < M; ++m)
      for (size_t n = n0; n < n0 + 32; ++n)
        if (c_at<int32_t>(C->bytes, M, m, n) != want[m * N + n]) return false;
    return true;
  }
};

TEST(Pc, FollowsTheTrailerThroughThreeTasks) {
  Chain ch;
  const ChainResult r = ch.run(3);
  ASSERT_EQ(r.status, CoreStatus::ok) << r.message;
  EXPECT_EQ(r.tasks_done, 3u);
  EXPECT_EQ(r.int_status, 0x300u);
  EXPECT_TRUE(ch.column_range_done(0));
  EXPECT_TRUE(ch.column_range_done(32));
  EXPECT_TRUE(ch.column_range_done(64));
}

TEST(Pc, StopsAfterMaxTasksLikeRocketsOneTaskKick) {
  Chain ch;
  const ChainResult r = ch.run(1);
  ASSERT_EQ(r.status, CoreStatus::ok) << r.message;
  EXPECT_EQ(r.tasks_done, 1u);
  EXPECT_TRUE(ch.column_range_done(0));
  EXPECT_FALSE(ch.column_range_done(32));  // still the 0xee fill
  EXPECT_EQ(c_at<int32_t>(ch.C->bytes, Chain::M, 0, 32), static_cast<int32_t>(0xeeeeeeee));
}

TEST(Pc, StopsWhereTheChainPointerIsZero) {
  Chain ch;
  const ChainResult r = ch.run(10);  // the last task's trailer ends the chain at 3
  ASSERT_EQ(r.status, CoreStatus::ok) << r.message;
  EXPECT_EQ(r.tasks_done, 3u);
}

TEST(Pc, RegcmdFetchOutsideABoIsADmaReadError) {
  Chain ch;
  const ChainResult r = run_chain(ch.dev.mem, 0, ch.cmd->iova + 4096 - 8, 4, 1);
  EXPECT_EQ(r.status, CoreStatus::dma_read_error);
  EXPECT_EQ(r.int_status, 1u << 12);
  EXPECT_EQ(r.tasks_done, 0u);
  EXPECT_NE(r.message.find("regcmd fetch"), std::string::npos) << r.message;
}

TEST(Pc, ABrokenChainPointerFailsTheSecondTask) {
  Chain ch;
  auto* first = reinterpret_cast<uint64_t*>(ch.cmd->bytes.data());
  std::span<uint64_t> task0(first, ch.lengths[0]);
  regcmd::patch_next(task0, 0x7000'0000, ch.lengths[1]);  // nothing is mapped there
  const ChainResult r = ch.run(3);
  EXPECT_EQ(r.status, CoreStatus::dma_read_error);
  EXPECT_EQ(r.tasks_done, 1u);
  EXPECT_NE(r.message.find("task 1"), std::string::npos) << r.message;
}

TEST(Pc, AnEntryWithTheWrongTargetIsAConfigError) {
  Device dev;
  regcmd::Builder rc;
  rc.emit_raw(regs::Block::dpu, regs::CNA_DATA_SIZE0, 1);  // CNA register, DPU target
  rc.finish(0, 0);
  const ChainResult r = run_one(dev, {rc.entries().begin(), rc.entries().end()});
  EXPECT_EQ(r.status, CoreStatus::config_error);
  EXPECT_NE(r.message.find("register 0x1020 belongs to CNA (target 0x0201) but the entry names target 0x1001"),
            std::string::npos) << r.message;
}

TEST(Pc, ATaskWithoutCnaCoreDpuInOpEnNeverCompletes) {
  Device dev;
  TaskSpec t{.mc = 1, .kt = 32, .nt = 32, .a_surf = 1, .c_surf = 1, .op_en = 0x08};
  const ChainResult r = run_one(dev, one_task(t));
  EXPECT_EQ(r.status, CoreStatus::wedged);
  EXPECT_EQ(r.tasks_done, 0u);
  EXPECT_NE(r.message.find("op_en = 0x8"), std::string::npos) << r.message;
}

TEST(Pc, ATaskWithoutOpEnNeverStarts) {
  Device dev;
  const std::vector<uint64_t> entries = {regcmd::encode(0x0201, 1, regs::CNA_DATA_SIZE2), 0};
  const ChainResult r = run_one(dev, entries);
  EXPECT_EQ(r.status, CoreStatus::wedged);
  EXPECT_NE(r.message.find("no op_en"), std::string::npos) << r.message;
}

}  // namespace
}  // namespace ork::emu::testing

namespace ork::emu::testing {
namespace {

// The timing-only PC (ChainWork::timing_only, zero_work.h's timing_only_executor): the same
// task timed the same way as the computing PC, and not one byte of the output written.
TEST(TimingOnlyChain, TimesLikeTheComputingPcAndMovesNothing) {
  const size_t M = 37, K = 96, N = 160;
  const auto a = random_i8(M * K, 3), b = random_i8(K * N, 4);
  Device dev;
  auto [A, B, C] = alloc_int8(dev, a, b, M, K, N, 0xa5);
  TaskSpec t{.mc = 37, .kt = 96, .nt = 160, .a = A.iova, .b = B.iova, .c = C.iova, .a_surf = 37, .c_surf = 37};
  k_reduction_banks(t);
  const std::vector<uint64_t> task = one_task(t);
  Bo& cmd = dev.alloc(task.size() * 8);
  std::memcpy(cmd.bytes.data(), task.data(), task.size() * 8);
  const auto entries = static_cast<uint32_t>(task.size());

  const std::vector<uint8_t> before = C.bytes;
  const ChainResult timing = run_chain(dev.mem, 0, cmd.iova, entries, 1, ChainWork::timing_only);
  ASSERT_EQ(timing.status, CoreStatus::ok) << timing.message;
  EXPECT_EQ(timing.tasks_done, 1u);
  EXPECT_EQ(C.bytes, before);  // nothing computed, nothing written

  const ChainResult computed = run_chain(dev.mem, 0, cmd.iova, entries, 1);
  ASSERT_EQ(computed.status, CoreStatus::ok) << computed.message;
  EXPECT_NE(C.bytes, before);
  EXPECT_EQ(timing.int_status, computed.int_status);
  EXPECT_DOUBLE_EQ(timing.modelled_ns, computed.modelled_ns);
  ASSERT_EQ(timing.demands.size(), 1u);
  ASSERT_EQ(computed.demands.size(), 1u);
  EXPECT_DOUBLE_EQ(timing.demands[0].macs, computed.demands[0].macs);
  EXPECT_DOUBLE_EQ(timing.demands[0].dram_bytes(), computed.demands[0].dram_bytes());
}

// A task the hardware would refuse is refused in timing-only mode too: its registers are
// still read and checked (here: op_en without the DPU never completes).
TEST(TimingOnlyChain, StillRefusesABadTask) {
  Device dev;
  TaskSpec t{.mc = 4, .kt = 32, .nt = 32, .a = dev.alloc(4 * 32).iova, .b = dev.alloc(32 * 32).iova,
             .c = dev.alloc(4 * 32 * 4).iova, .a_surf = 4, .c_surf = 4};
  k_reduction_banks(t);
  t.op_en = regcmd::kOpEnCnaCoreDpu & ~0x08u;  // bit 3, the DPU, left out
  const std::vector<uint64_t> task = one_task(t);
  Bo& cmd = dev.alloc(task.size() * 8);
  std::memcpy(cmd.bytes.data(), task.data(), task.size() * 8);
  const ChainResult r = run_chain(dev.mem, 0, cmd.iova, static_cast<uint32_t>(task.size()), 1, ChainWork::timing_only);
  EXPECT_EQ(r.status, CoreStatus::wedged);
  EXPECT_EQ(r.tasks_done, 0u);
}

}  // namespace
}  // namespace ork::emu::testing
