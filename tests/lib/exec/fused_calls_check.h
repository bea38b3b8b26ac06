// One fused call on `wide` (K x the members' N summed) checked three ways against `alone`
// (each member's output when run alone): through the runner, as a matmul job, and with only
// member `keep` written (fusion.h member_columns). `called` keeps the runner's outputs for a
// test's further checks. Shared by fused_columns_test.cpp and fused_slices_test.cpp.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "lib/exec/fusion.h"
#include "lib/matmul/job.h"
#include "lib/matmul/run.h"

namespace ork::exec::testing {

inline void check_fused_calls(driver::Kmd& kmd, matmul::MatmulRunner& runner, const matmul::ResidentWeights& wide,
                              const void* a, int64_t m, const matmul::RunOptions& ro, const std::vector<int64_t>& ns,
                              const std::vector<std::vector<uint8_t>>& alone, int keep, const std::string& at,
                              std::vector<std::vector<uint8_t>>& called) {
  std::vector<std::vector<uint8_t>> jobbed, kept;
  ASSERT_TRUE(runner.run(wide, a, m, nullptr, ro, nullptr, member_columns(ns, m, called))) << at;
  EXPECT_EQ(called, alone) << at << ": the runner's fused call";
  matmul::RunStats stats;
  auto ctx = runner.acquire(wide, m, ro, stats);
  ASSERT_TRUE(ctx) << ctx.error().message;
  matmul::Job job(kmd);
  ASSERT_TRUE(job.add(*ctx, a, member_columns(ns, m, jobbed))) << at;
  ASSERT_TRUE(job.submit()) << at;
  ASSERT_TRUE(job.complete()) << at;
  EXPECT_EQ(jobbed, alone) << at << ": the fused job";
  ASSERT_TRUE(runner.run(wide, a, m, nullptr, ro, nullptr, member_columns(ns, m, kept, keep))) << at;
  for (size_t j = 0; j < kept.size(); ++j) {
    if (static_cast<int>(j) != keep) {
      EXPECT_TRUE(kept[j].empty()) << at << ": member " << j << " not kept is written";
    }
  }
  EXPECT_EQ(kept[static_cast<size_t>(keep)], alone[static_cast<size_t>(keep)]) << at << ": the kept member";
}

}  // namespace ork::exec::testing
