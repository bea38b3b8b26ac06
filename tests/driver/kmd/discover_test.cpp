// Discovery: by DRM driver name, card nodes before render nodes, node override, errors.
#include "driver/kmd/kmd.h"
#include "driver_fixture.h"

namespace ork::testing {
namespace {

using driver::KmdKind;

TEST(Discover, AutoFindsTheRknpuCardNodeFirst) {
  emu::FakeKernel kernel;
  auto kmd = driver::discover(kernel, std::nullopt);
  ASSERT_TRUE(kmd.ok()) << kmd.error().message;
  EXPECT_EQ((*kmd)->info().kind, KmdKind::rknpu);
  EXPECT_EQ((*kmd)->info().node, "/dev/dri/card1");
}

TEST(Discover, RocketByKind) {
  emu::FakeKernel kernel;
  auto kmd = driver::discover(kernel, KmdKind::rocket);
  ASSERT_TRUE(kmd.ok()) << kmd.error().message;
  EXPECT_EQ((*kmd)->info().node, "/dev/accel/accel0");
  EXPECT_EQ((*kmd)->info().driver_name, "rocket");
}

TEST(Discover, AutoFallsBackToRocketWithoutRknpu) {
  emu::FakeKernelConfig cfg;
  cfg.rknpu = false;
  emu::FakeKernel kernel(cfg);
  auto kmd = driver::discover(kernel, std::nullopt);
  ASSERT_TRUE(kmd.ok()) << kmd.error().message;
  EXPECT_EQ((*kmd)->info().kind, KmdKind::rocket);
}

TEST(Discover, RenderNodeIsUsedWhenNoCardNodeIsRknpu) {
  emu::FakeKernelConfig cfg;
  cfg.rknpu_card = "";
  emu::FakeKernel kernel(cfg);
  auto kmd = driver::discover(kernel, KmdKind::rknpu);
  ASSERT_TRUE(kmd.ok()) << kmd.error().message;
  EXPECT_EQ((*kmd)->info().node, "/dev/dri/renderD129");
}

TEST(Discover, NodeOverride) {
  emu::FakeKernel kernel;
  auto render = driver::discover(kernel, std::nullopt, "/dev/dri/renderD129");
  ASSERT_TRUE(render.ok()) << render.error().message;
  EXPECT_EQ((*render)->info().node, "/dev/dri/renderD129");
  EXPECT_EQ((*render)->info().kind, KmdKind::rknpu);
  auto accel = driver::discover(kernel, std::nullopt, "/dev/accel/accel0");
  ASSERT_TRUE(accel.ok()) << accel.error().message;
  EXPECT_EQ((*accel)->info().kind, KmdKind::rocket);
  // The wrong interface for a node: the driver name check refuses it.
  auto wrong = driver::discover(kernel, KmdKind::rknpu, "/dev/accel/accel0");
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.error().code, -ENODEV);
  EXPECT_EQ(wrong.error().message, "/dev/accel/accel0 is DRM driver 'rocket', not 'rknpu'");
  auto missing = driver::discover(kernel, std::nullopt, "/dev/dri/card0");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, -ENOENT);
  EXPECT_EQ(missing.error().message,
            "cannot open /dev/dri/card0: ENOENT (No such file or directory)");
}

TEST(Discover, NothingFoundNamesWhatWasSeen) {
  emu::FakeKernelConfig cfg;
  cfg.rknpu = false;
  emu::FakeKernel kernel(cfg);
  auto kmd = driver::discover(kernel, KmdKind::rknpu);
  ASSERT_FALSE(kmd.ok());
  EXPECT_EQ(kmd.error().code, -ENODEV);
  EXPECT_EQ(kmd.error().message, "no rknpu device found (nodes seen: none)");
  emu::FakeKernelConfig none;
  none.rknpu = none.rocket = false;
  emu::FakeKernel empty(none);
  auto any = driver::discover(empty, std::nullopt);
  ASSERT_FALSE(any.ok());
  EXPECT_EQ(any.error().message, "no rknpu or rocket device found (nodes seen: none)");
}

// A board's display controller (DRM driver "rockchip") on card0, before the NPU's card1: the
// driver-name check skips it, says what it saw, and refuses it when named.
TEST(Discover, AnotherDriversCardNodeIsSkipped) {
  emu::FakeKernelConfig cfg;
  cfg.display_card = "/dev/dri/card0";
  emu::FakeKernel kernel(cfg);
  EXPECT_EQ(kernel.list_nodes("/dev/dri/card*"), (std::vector<std::string>{"/dev/dri/card0", "/dev/dri/card1"}));
  auto kmd = driver::discover(kernel, KmdKind::rknpu);
  ASSERT_TRUE(kmd.ok()) << kmd.error().message;
  EXPECT_EQ((*kmd)->info().node, "/dev/dri/card1");
  auto named = driver::discover(kernel, std::nullopt, "/dev/dri/card0");
  ASSERT_FALSE(named.ok());
  EXPECT_EQ(named.error().code, -ENODEV);
  EXPECT_EQ(named.error().message, "/dev/dri/card0 is DRM driver 'rockchip'; libork speaks 'rknpu' and 'rocket'");
  cfg.rknpu = false;  // the display alone: seen, skipped, nothing found
  emu::FakeKernel display_only(cfg);
  auto none = driver::discover(display_only, KmdKind::rknpu);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().message, "no rknpu device found (nodes seen: /dev/dri/card0 (rockchip))");
}

TEST(Discover, FakeKernelListsItsNodesByPattern) {
  emu::FakeKernel kernel;
  EXPECT_EQ(kernel.list_nodes("/dev/dri/card*"), (std::vector<std::string>{"/dev/dri/card1"}));
  EXPECT_EQ(kernel.list_nodes("/dev/dri/*"),
            (std::vector<std::string>{"/dev/dri/card1", "/dev/dri/renderD129"}));
  EXPECT_EQ(kernel.list_nodes("/dev/accel/accel*"),
            (std::vector<std::string>{"/dev/accel/accel0"}));
}

}  // namespace
}  // namespace ork::testing
