// DeviceMemory (driver/emu/npu/memory.h): an access is served only when it lies wholly
// inside one mapped BO; straddling, wrapping or unmapped accesses are refused.
#include "tests/driver/emu/npu/npu_fixture.h"

namespace ork::emu::testing {
namespace {

TEST(Faults, DeviceMemoryRefusesStraddlingAccesses) {
  Device dev;
  Bo& a = dev.alloc(4096);
  EXPECT_NE(dev.mem.span(a.iova, 4096), nullptr);
  EXPECT_EQ(dev.mem.span(a.iova, 4097), nullptr);
  EXPECT_EQ(dev.mem.span(a.iova + 4095, 2), nullptr);
  EXPECT_EQ(dev.mem.span(a.iova - 1, 1), nullptr);
  EXPECT_EQ(dev.mem.span(a.iova + 8, ~size_t{0}), nullptr);  // no wrap-around
  uint8_t x = 7;
  EXPECT_TRUE(dev.mem.write(a.iova + 4095, &x, 1));
  EXPECT_EQ(a.bytes[4095], 7);
  EXPECT_FALSE(dev.mem.read(a.iova + 4095, &x, 2));
  dev.mem.unmap(a.iova);
  EXPECT_EQ(dev.mem.span(a.iova, 1), nullptr);
}

}  // namespace
}  // namespace ork::emu::testing
