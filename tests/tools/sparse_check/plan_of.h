// A plan from the real planner (lib/matmul/plan.h) for sparse_check's tests; a planner error
// fails the calling test and yields an empty plan.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>

#include "lib/matmul/plan.h"

namespace ork::tools::testing {

inline matmul::Plan plan_of(int64_t m, int64_t k, int64_t n, int cores, int64_t mc_cap = 0) {
  matmul::PlanOptions o;
  o.cores = cores;
  o.mc_cap = mc_cap;
  Result<matmul::Plan> p = matmul::make_plan({m, k, n}, o);
  EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().message);
  return p.ok() ? *p : matmul::Plan{};
}

}  // namespace ork::tools::testing
