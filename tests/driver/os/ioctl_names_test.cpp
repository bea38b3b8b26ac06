// The ioctl -> name table that logs use (driver/os/ioctl.h ioctl_name): every request of
// both uAPIs and of the DRM core by name, anything else as its number.
#include <gtest/gtest.h>

#include "driver/os/ioctl.h"
#include "uapi/rknpu_ioctl.h"
#include "uapi/rocket_accel.h"

namespace ork::driver {
namespace {

TEST(Uapi, IoctlNamesForLogs) {
  EXPECT_EQ(ioctl_name(0xC0686441), "RKNPU_SUBMIT");
  EXPECT_EQ(ioctl_name(0xC0306442), "RKNPU_MEM_CREATE");
  EXPECT_EQ(ioctl_name(0xC0286442), "RKNPU_MEM_CREATE_V0");
  EXPECT_EQ(ioctl_name(0xC0086440), "RKNPU_ACTION");
  EXPECT_EQ(ioctl_name(0xC0106443), "RKNPU_MEM_MAP");
  EXPECT_EQ(ioctl_name(0xC0106444), "RKNPU_MEM_DESTROY");
  EXPECT_EQ(ioctl_name(0xC0206445), "RKNPU_MEM_SYNC");
  EXPECT_EQ(ioctl_name(0xC0186440), "ROCKET_CREATE_BO");
  EXPECT_EQ(ioctl_name(0x40186441), "ROCKET_SUBMIT");
  EXPECT_EQ(ioctl_name(0x40106442), "ROCKET_PREP_BO");
  EXPECT_EQ(ioctl_name(0x40086443), "ROCKET_FINI_BO");
  EXPECT_EQ(ioctl_name(DRM_IOCTL_VERSION), "DRM_VERSION");
  EXPECT_EQ(ioctl_name(DRM_IOCTL_GEM_CLOSE), "DRM_GEM_CLOSE");
  EXPECT_EQ(ioctl_name(0x12345678), "ioctl 0x12345678");
}

}  // namespace
}  // namespace ork::driver
