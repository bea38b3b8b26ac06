// int8 matmuls of K past 4096 through the executor (packed file, board plan, chained group
// jobs), in K-slices as wide as the resident-row budget allows (lib/matmul/plan.cpp
// choose_slices: the fewest of at most 3072, evened out): a layer of four "up / down" pairs,
// x (64) -> K -> 64 for K = 4097, 6144, 8960 and 18944, at M = 1, 2, 64 and 128 on emu and
// emu-rocket, 1 and 3 cores, the whole chain against the CPU reference byte for byte.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "lib/api/device.h"
#include "lib/exec/chain_reference.h"
#include "lib/exec/executor.h"
#include "lib/exec/pack_file.h"
#include "lib/exec/synthetic.h"
#include "tests/lib/exec/cached_model.h"
#include "tests/lib/exec/exec_util.h"
#include "tests/support/device_names.h"

namespace ork::exec {
namespace {

constexpr int64_t kWideHidden = 64;

// x -> u<K> (64 x K) -> d<K> (K x 64), the four K side by side; the output x + every d.
ModelDesc wide_k_desc() {
  ModelDesc d;
  d.name = "int8-wide-k";
  d.dtype = matmul::DType::int8;
  d.hidden = kWideHidden;
  d.layers = 1;
  d.output = {"x"};
  for (int64_t k : {4097, 6144, 8960, 18944}) {
    const std::string up = "u" + std::to_string(k), down = "d" + std::to_string(k);
    d.matmuls.push_back({up, up, kWideHidden, k, {"x"}, synthetic_shift(kWideHidden, d.dtype), {}});
    d.matmuls.push_back({down, down, k, kWideHidden, {up}, synthetic_shift(k, d.dtype), {}});
    d.output.push_back(down);
  }
  return d;
}

struct WideCase {
  const char* device;
  int cores;
  int64_t m;
};

std::string wide_case_name(const ::testing::TestParamInfo<WideCase>& i) {
  return ork::testing::device_test_name(i.param.device) + "_c" + std::to_string(i.param.cores) + "_m" +
         std::to_string(i.param.m);
}

class ExecutorInt8Wide : public ::testing::TestWithParam<WideCase> {};

TEST_P(ExecutorInt8Wide, EveryOutputEqualsTheReference) {
  const WideCase& c = GetParam();
  const ModelDesc d = wide_k_desc();
  ASSERT_TRUE(check_desc(d));
  const std::string path = testing::scratch("int8_wide_k.ork");
  testing::CachedModel cached;
  ASSERT_TRUE(cached.write_and_load(path, d, 17));
  const PackedModel& model = cached.model;
  auto dev = api::open_device(c.device);
  ASSERT_TRUE(dev) << dev.error().message;
  PlanOptions o;
  o.m = c.m;
  o.tokens = 1;
  o.cores = c.cores;
  o.budget_bytes = model.weight_bytes() * 2;
  auto plan = build_plan(model, o);
  ASSERT_TRUE(plan) << plan.error().message;
  auto out = run_plan(path, model, *plan, o, api::exec_device(**dev, c.cores), RunOptions{});
  ASSERT_TRUE(out) << out.error().message;
  auto want = reference_chain(path, model, c.m, 1);
  ASSERT_TRUE(want) << want.error().message;
  const Status same = compare_chains(model, out->chain, *want);
  EXPECT_TRUE(same) << same.error().message;
}

std::vector<WideCase> wide_cases() {
  std::vector<WideCase> out;
  for (const char* device : {"emu", "emu-rocket"})
    for (int cores : {1, 3})
      for (int64_t m : {1, 2, 64, 128}) out.push_back({device, cores, m});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Shapes, ExecutorInt8Wide, ::testing::ValuesIn(wide_cases()), wide_case_name);

}  // namespace
}  // namespace ork::exec
