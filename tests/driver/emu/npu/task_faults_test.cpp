// A task's DMA faults and config errors (driver/emu/npu/task.cpp, task_config.cpp): the job
// fails with the right status, names the problem, and writes nothing (guard bytes around the
// output stay as they were). DeviceMemory's own bounds: memory_test.cpp.
#include "tests/driver/emu/npu/npu_fixture.h"

namespace ork::emu::testing {
namespace {

struct FaultSetup {
  Device dev;
  Bo* A;
  Bo* B;
  Bo* C;
  TaskSpec t;
  FaultSetup() {
    A = &dev.alloc(64 * 128, 1);
    B = &dev.alloc(128 * 64, 1);
    C = &dev.alloc(64 * 64 * 4, 0x5a);
    t = TaskSpec{.mc = 64, .kt = 128, .nt = 64, .a = A->iova, .b = B->iova, .c = C->iova, .a_surf = 64, .c_surf = 64};
    k_reduction_banks(t);
  }
  bool output_untouched() const {
    for (uint8_t v : C->bytes)
      if (v != 0x5a) return false;
    return true;
  }
};

TEST(Faults, FeatureReadPastItsBo) {
  FaultSetup s;
  s.t.a_surf = 65;  // last K-surface ends 16 bytes * 7 past the A buffer
  const ChainResult r = run_one(s.dev, one_task(s.t));
  EXPECT_EQ(r.status, CoreStatus::dma_read_error);
  EXPECT_EQ(r.int_status, 1u << 12);
  EXPECT_NE(r.message.find("feature DMA"), std::string::npos) << r.message;
  EXPECT_TRUE(s.output_untouched());
}

TEST(Faults, WeightReadPastItsBo) {
  FaultSetup s;
  s.t.b = s.B->iova + 16;
  const ChainResult r = run_one(s.dev, one_task(s.t));
  EXPECT_EQ(r.status, CoreStatus::dma_read_error);
  EXPECT_NE(r.message.find("weight DMA"), std::string::npos) << r.message;
  EXPECT_TRUE(s.output_untouched());
}

TEST(Faults, OutputWritePastItsBoWritesNothing) {
  FaultSetup s;
  s.t.c_surf = 65;  // the last surface runs 16*15 bytes past C
  const ChainResult r = run_one(s.dev, one_task(s.t));
  EXPECT_EQ(r.status, CoreStatus::dma_write_error);
  EXPECT_EQ(r.int_status, 1u << 13);
  EXPECT_NE(r.message.find("output DMA: surface 15"), std::string::npos) << r.message;
  EXPECT_TRUE(s.output_untouched());
}

TEST(Faults, OutputIntoUnmappedSpace) {
  FaultSetup s;
  s.t.c = 0x10;  // below every BO
  EXPECT_EQ(run_one(s.dev, one_task(s.t)).status, CoreStatus::dma_write_error);
  EXPECT_TRUE(s.output_untouched());
}

TEST(Faults, CheckedRegistersNameTheProblem) {
  struct Bad { const char* what; void (*spoil)(TaskSpec&); const char* text; };
  const Bad cases[] = {
      {"banks > 12", [](TaskSpec& t) { t.data_banks = 6; t.weight_banks = 7; }, "DATA_BANK 6 + WEIGHT_BANK 7 > 12"},
      {"no weight bank", [](TaskSpec& t) { t.data_banks = 3; t.weight_banks = 0; }, "needs >= 1 of each"},
      {"K not /32", [](TaskSpec& t) { t.kt = 112; }, "DATAIN_CHANNEL = 112"},
      {"precision", [](TaskSpec& t) { t.type = static_cast<Type>(4); }, "IN_PRECISION = 4"},
      {"fp16 out on int8", [](TaskSpec& t) { t.fp16_out = true; }, "FP32TOFP16_EN = 1"},
  };
  for (const Bad& b : cases) {
    FaultSetup s;
    b.spoil(s.t);
    const ChainResult r = run_one(s.dev, one_task(s.t));
    EXPECT_EQ(r.status, CoreStatus::config_error) << b.what;
    EXPECT_NE(r.message.find(b.text), std::string::npos) << b.what << ": " << r.message;
    EXPECT_TRUE(s.output_untouched()) << b.what;
  }
}

TEST(Faults, WeightSizeTooSmallForTheColumns) {
  FaultSetup s;
  regcmd::Builder rc;
  emit_body(rc, s.t);
  rc.emit(regs::CnaWeightSize0{.weight_bytes = 128 * 32});  // later write wins: half the columns
  rc.finish(0, 0);
  const ChainResult r = run_one(s.dev, {rc.entries().begin(), rc.entries().end()});
  EXPECT_EQ(r.status, CoreStatus::config_error);
  EXPECT_NE(r.message.find("CNA_WEIGHT_SIZE0 = 4096 bytes, but 64 columns of K = 128 need 8192"),
            std::string::npos) << r.message;
}

// ORIG_CHANNEL = CHANNEL in every public matmul (docs/regcmd-contract.md section 8); a task
// that leaves it 0, as libork once did, is refused rather than run with an unmodelled value.
TEST(Faults, OrigChannelMustEqualChannel) {
  FaultSetup s;
  regcmd::Builder rc;
  emit_body(rc, s.t);
  rc.emit(regs::DpuDataCubeChannel{.channel = 63, .orig_channel = 0});  // later write wins
  rc.finish(0, 0);
  const ChainResult r = run_one(s.dev, {rc.entries().begin(), rc.entries().end()});
  EXPECT_EQ(r.status, CoreStatus::config_error);
  EXPECT_NE(r.message.find("DPU_DATA_CUBE_CHANNEL.ORIG_CHANNEL = 0, a matmul needs CHANNEL = 63"),
            std::string::npos) << r.message;
  EXPECT_TRUE(s.output_untouched());
}

}  // namespace
}  // namespace ork::emu::testing
