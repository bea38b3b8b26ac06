// Register state across jobs (driver/emu/npu/prior_state.h, ORK_EMU_REGS): a core keeps what
// earlier jobs wrote; a task that relies on a register it did not write computes (or, here,
// is refused) with someone else's value; a task that writes everything the matmul depends on
// gives the same bytes from a reset core, after other jobs, from random state and from the
// vendor runtime's leftovers.
#include <cstdlib>
#include <memory>

#include "driver/emu/npu/prior_state.h"
#include "driver/emu/npu/regfile.h"
#include "driver/regs/matmul_fixed.h"
#include "tests/driver/emu/npu/npu_fixture.h"

namespace ork::emu::testing {
namespace {

struct PriorProduct {
  Device dev;
  std::vector<int8_t> a, b;
  Int8Bos bos;
  TaskSpec t;
  static constexpr size_t M = 37, K = 96, N = 64;
  PriorProduct() : a(random_i8(M * K, 11)), b(random_i8(K * N, 12)), bos(alloc_int8(dev, a, b, M, K, N, 0x5a)) {
    t = TaskSpec{.mc = M, .kt = K, .nt = N, .a = bos.A.iova, .b = bos.B.iova, .c = bos.C.iova, .a_surf = M, .c_surf = M};
    k_reduction_banks(t);
  }
  ChainResult run(RegisterFile& regs, const TaskSpec& spec) {
    const auto entries = one_task(spec);
    Bo& cmd = dev.alloc(entries.size() * 8);
    std::memcpy(cmd.bytes.data(), entries.data(), entries.size() * 8);
    return run_chain(dev.mem, regs, 0, cmd.iova, static_cast<uint32_t>(entries.size()), 1);
  }
  bool exact() const {
    const auto want = ref_matmul_i32(a, b, M, K, N);
    for (size_t m = 0; m < M; ++m)
      for (size_t n = 0; n < N; ++n)
        if (c_at<int32_t>(bos.C.bytes, M, m, n) != want[m * N + n]) return false;
    return true;
  }
};

TEST(RegisterState, AChainLeavesItsWritesInTheCore) {
  PriorProduct p;
  auto regs = std::make_unique<RegisterFile>();
  ASSERT_EQ(p.run(*regs, p.t).status, CoreStatus::ok);
  EXPECT_EQ(regs->view<regs::CnaDataSize0>().datain_height, PriorProduct::M);
  EXPECT_EQ(regs->get(regs::DPU_BS_CFG), 0x53u);
  regs->clear();  // what a soft reset leaves
  EXPECT_EQ(regs->get(regs::DPU_BS_CFG), 0u);
}

// A task that leaves the fixed matmul registers out runs only when an earlier job happened
// to leave the right values: kept state is visible to the next job, as on silicon.
TEST(RegisterState, AnIncompleteTaskDependsOnWhatTheLastJobLeft) {
  PriorProduct p;
  TaskSpec partial = p.t;
  partial.skip_fixed = true;
  auto fresh = std::make_unique<RegisterFile>();
  const ChainResult refused = p.run(*fresh, partial);
  ASSERT_EQ(refused.status, CoreStatus::config_error);
  EXPECT_NE(refused.message.find("CNA_CVT_CON0 = 0x0: a matmul needs 0xb"), std::string::npos) << refused.message;

  auto kept = std::make_unique<RegisterFile>();
  ASSERT_EQ(p.run(*kept, p.t).status, CoreStatus::ok);       // a complete job first ...
  ASSERT_EQ(p.run(*kept, partial).status, CoreStatus::ok);   // ... leaves what the next needs
  EXPECT_TRUE(p.exact());
}

// Every register of matmul_fixed.h is checked: any other value in any one of them refuses
// the task, naming the register.
TEST(RegisterState, EveryFixedRegisterIsChecked) {
  PriorProduct p;
  TaskSpec partial = p.t;
  partial.skip_fixed = true;
  for (const regs::FixedWrite& f : regs::kMatmulFixed) {
    auto regs = std::make_unique<RegisterFile>();
    for (const regs::FixedWrite& g : regs::kMatmulFixed) regs->set(g.offset, g.value);
    regs->set(f.offset, f.value ^ 0x100u);
    const ChainResult r = p.run(*regs, partial);
    ASSERT_EQ(r.status, CoreStatus::config_error) << regs::find_reg(f.block, f.offset)->name;
    EXPECT_NE(r.message.find(regs::find_reg(f.block, f.offset)->name), std::string::npos) << r.message;
  }
}

// A complete task gives the same bytes whatever the core held: random values in every
// register (core + job even) and the vendor runtime's int4 task over random values (odd).
TEST(RegisterState, ACompleteTaskIsExactFromAdversarialState) {
  for (int core = 0; core < 3; ++core) {
    for (uint64_t job = 0; job < 4; ++job) {
      PriorProduct p;
      auto regs = std::make_unique<RegisterFile>();
      adversarial_state(*regs, core, job);
      const ChainResult r = p.run(*regs, p.t);
      ASSERT_EQ(r.status, CoreStatus::ok) << "core " << core << " job " << job << ": " << r.message;
      EXPECT_TRUE(p.exact()) << "core " << core << " job " << job;
    }
  }
}

// Which state a job starts from: the vendor task's when core + job is odd, so every core
// meets both and the cores' first jobs do too (with job alone, job 0 was random everywhere
// and a test submitting once per core never met the vendor state).
TEST(RegisterState, BothStatesOnEveryCoreAndOnJobZero) {
  auto regs = std::make_unique<RegisterFile>();
  for (int core = 0; core < 3; ++core) {
    for (uint64_t job = 0; job < 4; ++job) {
      adversarial_state(*regs, core, job);
      const bool vendor = (static_cast<uint64_t>(core) + job) % 2 == 1;
      // CNA_CONV_CON1 = 0x360 is the vendor task's value; a random word equals it with
      // probability 2^-32 and is checked for this fixed seed.
      EXPECT_EQ(regs->get(regs::CNA_CONV_CON1) == 0x360u, vendor) << "core " << core << " job " << job;
    }
  }
}

TEST(RegisterState, AdversarialStatesDiffer) {
  auto a = std::make_unique<RegisterFile>(), b = std::make_unique<RegisterFile>();
  adversarial_state(*a, 0, 0);
  adversarial_state(*b, 0, 2);
  int same = 0;
  for (uint32_t off = 0; off < 0x10000; off += 4) same += a->get(static_cast<uint16_t>(off)) == b->get(static_cast<uint16_t>(off));
  EXPECT_LT(same, 16);  // two random fills share almost no word
  adversarial_state(*a, 0, 1);  // core 0, job 1: the vendor task's precision codes and bypasses
  EXPECT_EQ(a->get(regs::CNA_CONV_CON1), 0x360u);
  EXPECT_EQ(a->get(regs::DPU_DATA_FORMAT), 0x38000006u);
  EXPECT_EQ(a->get(regs::DPU_BS_CFG), 0x53u);
}

TEST(RegisterState, ModeFromTheEnvironment) {
  ::unsetenv("ORK_EMU_REGS");
  EXPECT_EQ(*register_mode_from_env(), RegisterMode::keep);
  ::setenv("ORK_EMU_REGS", "adversarial", 1);
  EXPECT_EQ(*register_mode_from_env(), RegisterMode::adversarial);
  ::setenv("ORK_EMU_REGS", "keep", 1);
  EXPECT_EQ(*register_mode_from_env(), RegisterMode::keep);
  ::setenv("ORK_EMU_REGS", "random", 1);
  auto bad = register_mode_from_env();
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "ORK_EMU_REGS='random': expected 'keep' or 'adversarial'");
  ::unsetenv("ORK_EMU_REGS");
}

}  // namespace
}  // namespace ork::emu::testing
