/* The mainline "rocket" accel driver's uAPI (Linux 6.18+, drivers/accel/rocket).
 *
 * Written for libork from the published layout of include/uapi/drm/rocket_accel.h
 * (torvalds/linux, uapi at f088104d) as recorded in docs/hardware.md section 2. The code is ours;
 * sizes and ioctl numbers are checked at compile time. Device node: /dev/accel/accelN. BOs are
 * freed with the generic DRM_IOCTL_GEM_CLOSE.
 */
#ifndef ORK_UAPI_ROCKET_ACCEL_H
#define ORK_UAPI_ROCKET_ACCEL_H

#include <drm.h> /* libdrm's copy of the kernel's drm.h: DRM_IOW/DRM_IOWR, DRM_COMMAND_BASE */

#ifdef __cplusplus
extern "C" {
#define ORK_UAPI_STATIC_ASSERT_ROCKET(cond, msg) static_assert(cond, msg)
#else
#define ORK_UAPI_STATIC_ASSERT_ROCKET(cond, msg) _Static_assert(cond, msg)
#endif

#define DRM_ROCKET_CREATE_BO 0x00
#define DRM_ROCKET_SUBMIT 0x01
#define DRM_ROCKET_PREP_BO 0x02
#define DRM_ROCKET_FINI_BO 0x03

struct drm_rocket_create_bo {
  __u32 size;        /* in: bytes */
  __u32 handle;      /* out */
  __u64 dma_address; /* out: IOVA in the file's own IOMMU domain */
  __u64 offset;      /* out: fake offset for mmap() */
};

/* One PC kick: a regcmd and its length in 64-bit entries INCLUDING the PC trailer (> 0). */
struct drm_rocket_task {
  __u32 regcmd;
  __u32 regcmd_count;
};

/* A job: its tasks run in order on one core; dependencies are implicit via the BOs. */
struct drm_rocket_job {
  __u64 tasks;          /* user pointer to task_count tasks, task_struct_size apart */
  __u64 in_bo_handles;  /* user pointer to __u32 handles */
  __u64 out_bo_handles; /* user pointer to __u32 handles */
  __u32 task_count;
  __u32 task_struct_size;
  __u32 in_bo_handle_count;
  __u32 out_bo_handle_count;
};

struct drm_rocket_submit {
  __u64 jobs; /* user pointer to job_count jobs, job_struct_size apart */
  __u32 job_count;
  __u32 job_struct_size;
  __u64 reserved; /* must be 0 */
};

/* Waits for the BO's write fences until timeout_ns (absolute CLOCK_MONOTONIC), then syncs
 * it for the CPU. */
struct drm_rocket_prep_bo {
  __u32 handle;
  __u32 reserved; /* must be 0 */
  __s64 timeout_ns;
};

/* Syncs the BO back for the device after CPU access. */
struct drm_rocket_fini_bo {
  __u32 handle;
  __u32 reserved; /* must be 0 */
};

#define DRM_IOCTL_ROCKET_CREATE_BO \
  DRM_IOWR(DRM_COMMAND_BASE + DRM_ROCKET_CREATE_BO, struct drm_rocket_create_bo)
#define DRM_IOCTL_ROCKET_SUBMIT \
  DRM_IOW(DRM_COMMAND_BASE + DRM_ROCKET_SUBMIT, struct drm_rocket_submit)
#define DRM_IOCTL_ROCKET_PREP_BO \
  DRM_IOW(DRM_COMMAND_BASE + DRM_ROCKET_PREP_BO, struct drm_rocket_prep_bo)
#define DRM_IOCTL_ROCKET_FINI_BO \
  DRM_IOW(DRM_COMMAND_BASE + DRM_ROCKET_FINI_BO, struct drm_rocket_fini_bo)

ORK_UAPI_STATIC_ASSERT_ROCKET(sizeof(struct drm_rocket_create_bo) == 24, "create_bo is 24 bytes");
ORK_UAPI_STATIC_ASSERT_ROCKET(sizeof(struct drm_rocket_task) == 8, "drm_rocket_task is 8 bytes");
ORK_UAPI_STATIC_ASSERT_ROCKET(sizeof(struct drm_rocket_job) == 40, "drm_rocket_job is 40 bytes");
ORK_UAPI_STATIC_ASSERT_ROCKET(sizeof(struct drm_rocket_submit) == 24, "submit is 24 bytes");
ORK_UAPI_STATIC_ASSERT_ROCKET(sizeof(struct drm_rocket_prep_bo) == 16, "prep_bo is 16 bytes");
ORK_UAPI_STATIC_ASSERT_ROCKET(sizeof(struct drm_rocket_fini_bo) == 8, "fini_bo is 8 bytes");
ORK_UAPI_STATIC_ASSERT_ROCKET(DRM_IOCTL_ROCKET_CREATE_BO == 0xC0186440u, "CREATE_BO number");
ORK_UAPI_STATIC_ASSERT_ROCKET(DRM_IOCTL_ROCKET_SUBMIT == 0x40186441u, "SUBMIT number");
ORK_UAPI_STATIC_ASSERT_ROCKET(DRM_IOCTL_ROCKET_PREP_BO == 0x40106442u, "PREP_BO number");
ORK_UAPI_STATIC_ASSERT_ROCKET(DRM_IOCTL_ROCKET_FINI_BO == 0x40086443u, "FINI_BO number");
/* The DRM core ioctls the emulator also answers (drm.h). */
ORK_UAPI_STATIC_ASSERT_ROCKET(DRM_IOCTL_GEM_CLOSE == 0x40086409u, "GEM_CLOSE number");
ORK_UAPI_STATIC_ASSERT_ROCKET(sizeof(struct drm_gem_close) == 8, "drm_gem_close is 8 bytes");

#ifdef __cplusplus
}
#endif

#endif /* ORK_UAPI_ROCKET_ACCEL_H */
