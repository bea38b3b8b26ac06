// Bad input never crashes the PC (driver/emu/npu/pc.cpp): random register files and chain
// pointers driven through run_chain (seeded, so a failure replays), and every outcome is one
// of the documented statuses with a message.
#include <cstdio>

#include "driver/regs/matmul_fixed.h"
#include "tests/driver/emu/npu/npu_fixture.h"

namespace ork::emu::testing {
namespace {

TEST(Robustness, RandomRegisterWritesNeverCrashOrEscapeBos) {
  std::mt19937 rng(20261130);
  // Every described register except the fixed matmul ones and their shape followers: a
  // spoiled one of those is refused before any DMA (prior_state_test.cpp covers each), and
  // would hide the DMA and wedge outcomes this test is after.
  std::vector<regs::RegInfo> regs_list;
  for (const regs::RegInfo& r : regs::all_regs()) {
    bool fixed = false;
    for (const regs::FixedWrite& f : regs::kMatmulFixed) fixed |= f.block == r.block && f.offset == r.offset;
    for (uint16_t o : {regs::CNA_FC_DATA_SIZE0, regs::CNA_FC_DATA_SIZE1, regs::DPU_BS_OW_CFG, regs::DPU_WDMA_SIZE_0,
                       regs::DPU_WDMA_SIZE_1, regs::DPU_SURFACE_ADD, regs::DPU_OUT_CVT_SCALE})
      fixed |= r.offset == o;
    if (!fixed) regs_list.push_back(r);
  }
  int statuses[5] = {};
  for (int round = 0; round < 400; ++round) {
    Device dev;
    Bo& data = dev.alloc(64 * 1024, 0x11);
    Bo& guard = dev.alloc(4096, 0x77);
    // Start from a valid task half of the time, then spoil a few registers at random.
    regcmd::Builder rc;
    if (round % 2 == 0) {
      TaskSpec t{.mc = 8, .kt = 64, .nt = 32, .a = data.iova, .b = data.iova + 4096, .c = data.iova + 8192,
                 .a_surf = 8, .c_surf = 8};
      emit_body(rc, t);
    }
    const int writes = 1 + static_cast<int>(rng() % 6);
    for (int i = 0; i < writes; ++i) {
      const regs::RegInfo& r = regs_list[rng() % regs_list.size()];
      if (r.block == regs::Block::global) continue;
      // Values near the task's buffers as well as anywhere in 32 bits.
      const uint32_t value = rng() % 2 ? static_cast<uint32_t>(rng()) : static_cast<uint32_t>(data.iova + rng() % 70000);
      rc.emit_raw(r.block, r.offset, value);
    }
    rc.finish(0, 0, rng() % 4 == 0 ? static_cast<uint32_t>(rng() & 0x7f) : regcmd::kOpEnCnaCoreDpu);
    const ChainResult r = run_one(dev, {rc.entries().begin(), rc.entries().end()});
    statuses[static_cast<int>(r.status)]++;
    if (r.status != CoreStatus::ok) {
      EXPECT_FALSE(r.message.empty());
    }
    for (uint8_t v : guard.bytes) ASSERT_EQ(v, 0x77) << "round " << round;
  }
  std::printf("ok %d read %d write %d config %d wedged %d\n", statuses[0], statuses[1], statuses[2], statuses[3], statuses[4]);
  EXPECT_GT(statuses[static_cast<int>(CoreStatus::ok)], 0);
  EXPECT_GT(statuses[static_cast<int>(CoreStatus::config_error)], 0);
  EXPECT_GT(statuses[static_cast<int>(CoreStatus::dma_read_error)], 0);
  EXPECT_GT(statuses[static_cast<int>(CoreStatus::wedged)], 0);
}

TEST(Robustness, RandomChainPointersNeverLoopForeverOrCrash) {
  std::mt19937 rng(7);
  for (int round = 0; round < 100; ++round) {
    Device dev;
    Bo& cmd = dev.alloc(4096);
    for (size_t i = 0; i < 512; ++i) {
      const uint64_t e = rng() % 3 == 0 ? regcmd::encode(0x0101, static_cast<uint32_t>(cmd.iova + (rng() % 4096)),
                                                         rng() % 2 ? regs::PC_BASE_ADDRESS : regs::PC_REGISTER_AMOUNTS)
                                        : (uint64_t{rng()} << 32 | rng());
      std::memcpy(cmd.bytes.data() + i * 8, &e, 8);
    }
    const ChainResult r = run_chain(dev.mem, 0, cmd.iova, 2 + 2 * (rng() % 255), 50);
    EXPECT_LE(r.tasks_done, 50u);
  }
}

}  // namespace
}  // namespace ork::emu::testing
