// ork_matmul_options.core_mask (ork.h): every mask 1..7 on both emulated kernel interfaces is
// bit-exact with the oracle and runs on the cores it names. emu-rknpu: the fake kernel's
// per-core PC kicks show that exactly the masked cores ran (masks 5 and 6, which the vendor
// kernel refuses in one SUBMIT, go one core per SUBMIT: driver/kmd/rknpu.cpp). emu-rocket:
// the uAPI has no core field (the kernel's scheduler picks), so the mask gives the number of
// jobs per submit; the fake kernel's job count shows it. Bad masks are named errors.
#include <gtest/gtest.h>

#include <bit>
#include <fmt/format.h>
#include <string>
#include <vector>

#include "lib/ref/random.h"
#include "tests/e2e/int8_fixture.h"

namespace {

using ork::ref::random_int8;

constexpr int64_t kMaskM = 200, kMaskK = 512, kMaskN = 384;  // enough N-tasks to give each of 3 cores work

class CoreMask : public ork::e2e::Int8Call {
 protected:
  CoreMask() : Int8Call(kMaskM, kMaskK, kMaskN) {}
  void SetUp() override {
    ASSERT_EQ(ork_device_open(GetParam(), &dev_), ORK_OK) << ork_last_error();
    set_operands(random_int8(kMaskM * kMaskK, 1), random_int8(kMaskK * kMaskN, 2));
    ASSERT_EQ(create_weights(), ORK_OK) << ork_last_error();
  }
  ork_status run(uint32_t mask, int cores = 0) {
    ork_matmul_options o{};
    o.struct_size = sizeof o;
    o.core_mask = mask;
    o.cores = cores;
    return run_with(o, 0x5a5a5a5a);
  }
  bool rocket() const { return std::string(GetParam()) == "emu-rocket"; }
};

TEST_P(CoreMask, EveryMaskIsExactOnItsCores) {
  for (uint32_t mask = 1; mask <= 7; ++mask) {
    const ork::emu::KernelStats before = dev_->fake->stats();
    ASSERT_EQ(run(mask), ORK_OK) << "mask " << mask << ": " << ork_last_error();
    EXPECT_EQ(got_, want_) << "mask " << mask;
    const ork::emu::KernelStats after = dev_->fake->stats();
    if (rocket()) {
      uint64_t jobs = 0;
      for (int core = 0; core < 3; ++core) jobs += after.rocket_jobs[core] - before.rocket_jobs[core];
      EXPECT_EQ(jobs, static_cast<uint64_t>(std::popcount(mask))) << "mask " << mask;
    } else {
      for (int core = 0; core < 3; ++core) {
        const uint64_t kicks = after.pc_kicks[core] - before.pc_kicks[core];
        if (mask & (1u << core))
          EXPECT_GT(kicks, 0u) << "mask " << mask << " core " << core;
        else
          EXPECT_EQ(kicks, 0u) << "mask " << mask << " core " << core;
      }
    }
  }
}

TEST_P(CoreMask, MaskAndCoresTogether) {
  EXPECT_EQ(run(0x6, 2), ORK_OK) << ork_last_error();
  EXPECT_EQ(got_, want_);
  EXPECT_EQ(run(0, 2), ORK_OK) << ork_last_error();  // no mask: cores 0 and 1
  EXPECT_EQ(got_, want_);
}

TEST_P(CoreMask, BadMasksAreNamed) {
  for (uint32_t mask : {0x8u, 0xfu, 0x10u, 0x80000000u}) {
    ASSERT_EQ(run(mask), ORK_E_INVALID_ARGUMENT) << mask;
    const std::string err = ork_last_error();
    EXPECT_NE(err.find("core_mask = 0x"), std::string::npos) << err;
    EXPECT_NE(err.find(fmt::format("0x{:x}", mask)), std::string::npos) << err;
    EXPECT_NE(err.find("3 cores"), std::string::npos) << err;
  }
  ASSERT_EQ(run(0x5, 1), ORK_E_INVALID_ARGUMENT);
  EXPECT_NE(std::string(ork_last_error()).find("cores = 1 with core_mask = 0x5"), std::string::npos) << ork_last_error();
  ASSERT_EQ(run(0x7), ORK_OK) << ork_last_error();  // the device is fine after the refusals
  EXPECT_EQ(got_, want_);
}

INSTANTIATE_TEST_SUITE_P(Emu, CoreMask, ::testing::Values("emu-rknpu", "emu-rocket"));

}  // namespace
