// uAPI sizes and numbers (include/uapi/): the headers static_assert them; here the same facts
// at run time. The ioctl -> name table that logs use: tests/driver/os/ioctl_names_test.cpp.
#include <gtest/gtest.h>

#include "driver/os/ioctl.h"
#include "uapi/rknpu_ioctl.h"
#include "uapi/rocket_accel.h"

namespace ork::driver {
namespace {

TEST(Uapi, RknpuStructSizesMatchThePublishedLayout) {
  EXPECT_EQ(sizeof(rknpu_action), 8u);
  EXPECT_EQ(sizeof(rknpu_submit), 104u);
  EXPECT_EQ(sizeof(rknpu_mem_create), 48u);
  EXPECT_EQ(sizeof(rknpu_mem_create_v0), 40u);
  EXPECT_EQ(sizeof(rknpu_mem_map), 16u);
  EXPECT_EQ(sizeof(rknpu_mem_destroy), 16u);
  EXPECT_EQ(sizeof(rknpu_mem_sync), 32u);
  EXPECT_EQ(sizeof(rknpu_task), 40u);
  EXPECT_EQ(offsetof(rknpu_task, regcmd_addr), 32u);
  EXPECT_EQ(offsetof(rknpu_submit, task_obj_addr), 24u);
  EXPECT_EQ(offsetof(rknpu_submit, hw_elapse_time), 48u);
  EXPECT_EQ(offsetof(rknpu_submit, core_mask), 56u);
  EXPECT_EQ(offsetof(rknpu_submit, subcore_task), 64u);
}

TEST(Uapi, RocketStructSizesMatchThePublishedLayout) {
  EXPECT_EQ(sizeof(drm_rocket_create_bo), 24u);
  EXPECT_EQ(sizeof(drm_rocket_task), 8u);
  EXPECT_EQ(sizeof(drm_rocket_job), 40u);
  EXPECT_EQ(sizeof(drm_rocket_submit), 24u);
  EXPECT_EQ(sizeof(drm_rocket_prep_bo), 16u);
  EXPECT_EQ(sizeof(drm_rocket_fini_bo), 8u);
  EXPECT_EQ(offsetof(drm_rocket_job, task_count), 24u);
}

TEST(Uapi, IoctlNumbersMatchThePublishedValues) {
  EXPECT_EQ(DRM_IOCTL_RKNPU_ACTION, 0xC0086440u);
  EXPECT_EQ(DRM_IOCTL_RKNPU_SUBMIT, 0xC0686441u);
  EXPECT_EQ(DRM_IOCTL_RKNPU_MEM_CREATE, 0xC0306442u);
  EXPECT_EQ(DRM_IOCTL_RKNPU_MEM_CREATE_V0, 0xC0286442u);
  EXPECT_EQ(DRM_IOCTL_RKNPU_MEM_MAP, 0xC0106443u);
  EXPECT_EQ(DRM_IOCTL_RKNPU_MEM_DESTROY, 0xC0106444u);
  EXPECT_EQ(DRM_IOCTL_RKNPU_MEM_SYNC, 0xC0206445u);
  EXPECT_EQ(DRM_IOCTL_ROCKET_CREATE_BO, 0xC0186440u);
  EXPECT_EQ(DRM_IOCTL_ROCKET_SUBMIT, 0x40186441u);
  EXPECT_EQ(DRM_IOCTL_ROCKET_PREP_BO, 0x40106442u);
  EXPECT_EQ(DRM_IOCTL_ROCKET_FINI_BO, 0x40086443u);
}

}  // namespace
}  // namespace ork::driver
