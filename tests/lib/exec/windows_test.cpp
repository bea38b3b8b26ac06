// A resident model over several NPU windows (lib/exec/windows.h): windows found, layers
// placed whole and in order, each slot in its layer's window, and the refusals named.
#include <gtest/gtest.h>

#include "lib/exec/exec_plan.h"
#include "lib/exec/synthetic.h"
#include "lib/exec/windows.h"
#include "tests/lib/exec/exec_util.h"

namespace ork::exec {
namespace {

PackedModel windows_tiny_model(int layers) {
  auto d = synthetic_desc("tiny", layers, matmul::DType::int8);
  EXPECT_TRUE(d);
  const std::string path = testing::scratch("windows.ork");
  EXPECT_TRUE(write_synthetic(path, *d, 1));
  auto m = read_packed(path);
  EXPECT_TRUE(m);
  return *m;
}

uint64_t layer_bytes(const PackedModel& m) {
  uint64_t b = 0;
  for (size_t j = 0; j < m.desc.matmuls.size(); ++j) b += align_up(m.tensor(0, static_cast<int>(j)).bytes, kPackAlign);
  return b;
}

// Three layers a window, seven layers: three windows, everything pinned.
PlanOptions resident(const PackedModel& m) {
  PlanOptions o;
  o.tokens = 2;
  o.budget_bytes = uint64_t{64} << 20;
  o.window_bytes = 3 * layer_bytes(m) + layer_bytes(m) / 2;
  return o;
}

TEST(Windows, FoundWhenTheResidentModelPassesOneWindow) {
  const PackedModel m = windows_tiny_model(7);
  PlanOptions o = resident(m);
  EXPECT_EQ(windows_needed(m, o.window_bytes, kPackAlign), 3);
  EXPECT_EQ(windows_found(m, o), 3);
  o.tokens = 1;  // read once: nothing stays, one window streams it
  EXPECT_EQ(windows_found(m, o), 1);
  o = resident(m);
  o.budget_bytes = 4 * layer_bytes(m);  // over the budget: streamed through one window
  EXPECT_EQ(windows_found(m, o), 1);
  o = resident(m);
  o.window_bytes = 8 * layer_bytes(m);  // one window holds it
  EXPECT_EQ(windows_found(m, o), 1);
}

TEST(Windows, LayersWholeAndInOrderEachSlotInItsLayersWindow) {
  const PackedModel m = windows_tiny_model(7);
  PlanOptions o = resident(m);
  o.windows = windows_found(m, o);
  auto plan = build_plan(m, o);
  ASSERT_TRUE(plan) << plan.error().message;
  auto p = place_windows(m, *plan, o);
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->windows, 3);
  EXPECT_EQ(p->layer_window, (std::vector<int>{0, 0, 0, 1, 1, 1, 2}));
  for (const Step& s : plan->op_steps) {
    if (s.slot >= 0) {
      EXPECT_EQ(p->slot_window[static_cast<size_t>(s.slot)], p->layer_window[static_cast<size_t>(s.layer)]);
    }
  }
  ASSERT_EQ(p->slot_bytes.size(), 3u);
  EXPECT_EQ(p->slot_bytes[0], 3 * layer_bytes(m));
  EXPECT_EQ(p->slot_bytes[2], layer_bytes(m));
  for (uint64_t b : p->slot_bytes) EXPECT_LE(b, o.window_bytes);
}

TEST(Windows, RefusedNamingWhy) {
  const PackedModel m = windows_tiny_model(7);
  PlanOptions o = resident(m);
  o.windows = 2;  // the layers need 3
  auto plan = build_plan(m, o);
  ASSERT_TRUE(plan);
  auto p = place_windows(m, *plan, o);
  ASSERT_FALSE(p);
  EXPECT_NE(p.error().message.find("need 3 NPU windows"), std::string::npos) << p.error().message;
  o.windows = 3;
  o.tokens = 1;  // nothing pinned
  auto one = build_plan(m, o);
  ASSERT_TRUE(one);
  auto q = place_windows(m, *one, o);
  ASSERT_FALSE(q);
  EXPECT_NE(q.error().message.find("stays resident"), std::string::npos) << q.error().message;
  o.windows = 17;
  EXPECT_FALSE(place_windows(m, *one, o));
}

}  // namespace
}  // namespace ork::exec
