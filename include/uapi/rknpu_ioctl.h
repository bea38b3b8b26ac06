/* The vendor rknpu kernel driver's uAPI (DRM variant, driver name "rknpu", 0.9.x).
 *
 * Written for libork from the published layouts: every struct, field, flag and number below
 * is a fact taken from the vendor driver's include/rknpu_ioctl.h (rockchip-linux/kernel,
 * orangepi-xunlong/linux-orangepi, drivers/rknpu/) as recorded, with sources, in
 * docs/hardware.md section 1. The code is ours; sizes and ioctl numbers
 * are checked at compile time below (C11 _Static_assert / C++ static_assert).
 *
 * The DMA-heap build of the same driver (misc device /dev/rknpu, ioctl type 'r') shares the
 * structs but not the numbers; libork speaks only the DRM variant.
 */
#ifndef ORK_UAPI_RKNPU_IOCTL_H
#define ORK_UAPI_RKNPU_IOCTL_H

#include <drm.h> /* libdrm's copy of the kernel's drm.h: DRM_IOWR, DRM_COMMAND_BASE */
#include <stddef.h> /* offsetof */

#ifdef __cplusplus
extern "C" {
#define ORK_UAPI_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#else
#define ORK_UAPI_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#endif

/* ---- ACTION: rknpu_action.flags selects the action (VND rknpu_ioctl.h enum e_rknpu_action) */
#define RKNPU_GET_HW_VERSION 0
#define RKNPU_GET_DRV_VERSION 1 /* value = major*10000 + minor*100 + patch: 0.9.8 -> 908 */
#define RKNPU_GET_FREQ 2
#define RKNPU_SET_FREQ 3
#define RKNPU_GET_VOLT 4
#define RKNPU_SET_VOLT 5
#define RKNPU_ACT_RESET 6
#define RKNPU_GET_BW_PRIORITY 7
#define RKNPU_SET_BW_PRIORITY 8
#define RKNPU_GET_BW_EXPECT 9
#define RKNPU_SET_BW_EXPECT 10
#define RKNPU_GET_BW_TW 11
#define RKNPU_SET_BW_TW 12
#define RKNPU_ACT_CLR_TOTAL_RW_AMOUNT 13
#define RKNPU_GET_DT_WR_AMOUNT 14
#define RKNPU_GET_DT_RD_AMOUNT 15
#define RKNPU_GET_WT_RD_AMOUNT 16
#define RKNPU_GET_TOTAL_RW_AMOUNT 17
#define RKNPU_GET_IOMMU_EN 18
#define RKNPU_SET_PROC_NICE 19
#define RKNPU_POWER_ON 20
#define RKNPU_POWER_OFF 21
#define RKNPU_GET_TOTAL_SRAM_SIZE 22
#define RKNPU_GET_FREE_SRAM_SIZE 23
#define RKNPU_GET_IOMMU_DOMAIN_ID 24
#define RKNPU_SET_IOMMU_DOMAIN_ID 25

/* ---- memory flags (rknpu_mem_create.flags); 0 = contiguous, non-cacheable */
#define RKNPU_MEM_NON_CONTIGUOUS 0x1
#define RKNPU_MEM_CACHEABLE 0x2
#define RKNPU_MEM_WRITE_COMBINE 0x4
#define RKNPU_MEM_KERNEL_MAPPING 0x8 /* required on the task BO: the kernel reads tasks */
#define RKNPU_MEM_IOMMU 0x10
#define RKNPU_MEM_ZEROING 0x20
#define RKNPU_MEM_SECURE 0x40
#define RKNPU_MEM_DMA32 0x80
#define RKNPU_MEM_TRY_ALLOC_SRAM 0x100
#define RKNPU_MEM_TRY_ALLOC_NBUF 0x200
#define RKNPU_MEM_IOMMU_LIMIT_IOVA_ALIGNMENT 0x400

/* ---- rknpu_mem_sync.flags */
#define RKNPU_MEM_SYNC_TO_DEVICE 0x1
#define RKNPU_MEM_SYNC_FROM_DEVICE 0x2

/* ---- rknpu_submit.flags */
#define RKNPU_JOB_PC 0x1    /* mandatory: non-PC submits return -EINVAL */
#define RKNPU_JOB_BLOCK 0x0 /* default: the ioctl waits for completion */
#define RKNPU_JOB_NONBLOCK 0x2
#define RKNPU_JOB_PINGPONG 0x4 /* sets PC TASK_CON.TASK_PP_EN */
#define RKNPU_JOB_FENCE_IN 0x8
#define RKNPU_JOB_FENCE_OUT 0x10

/* ---- core_mask values (VND rknpu_job.h): other masks (5, 6) are refused */
#define RKNPU_CORE_AUTO_MASK 0x0
#define RKNPU_CORE0_MASK 0x1
#define RKNPU_CORE1_MASK 0x2
#define RKNPU_CORE2_MASK 0x4

/* Regcmd entries after regcfg_amount: the 4-entry PC trailer (RKNPU_PC_DATA_EXTRA_AMOUNT). */
#define RKNPU_PC_DATA_EXTRA_AMOUNT 4
/* The PC's task counter is 12 bits wide on RK3588: at most 4095 tasks per kick. */
#define RKNPU_RK3588_MAX_SUBMIT_NUMBER 4095

struct rknpu_action {
  __u32 flags; /* RKNPU_GET_HW_VERSION ... */
  __u32 value; /* in or out, per action */
};

/* 48-byte layout of driver 0.9.x; older drivers had 40 bytes (no iommu_domain_id/reserved).
 * The DRM core zero-extends short structs, so the 40-byte ioctl still works on new kernels. */
struct rknpu_mem_create {
  __u32 handle;          /* out; an existing handle passed in returns that object */
  __u32 flags;           /* RKNPU_MEM_* */
  __u64 size;            /* bytes, rounded up to pages by the kernel */
  __u64 obj_addr;        /* out: the kernel's GEM object pointer (an opaque cookie) */
  __u64 dma_addr;        /* out: NPU IOVA */
  __u64 sram_size;       /* in/out: SRAM part, 0 on RK3588 without SRAM */
  __s32 iommu_domain_id; /* new in 0.9.x */
  __u32 reserved;
};

/* The legacy 40-byte layout (Mesa's intercept.c matches its literal ioctl 0xc0286442). */
struct rknpu_mem_create_v0 {
  __u32 handle;
  __u32 flags;
  __u64 size;
  __u64 obj_addr;
  __u64 dma_addr;
  __u64 sram_size;
};

struct rknpu_mem_map {
  __u32 handle;
  __u32 reserved;
  __u64 offset; /* out: fake offset for mmap(fd, offset) */
};

struct rknpu_mem_destroy {
  __u32 handle;
  __u32 reserved;
  __u64 obj_addr;
};

struct rknpu_mem_sync {
  __u32 flags; /* RKNPU_MEM_SYNC_*; -EINVAL unless the BO is CACHEABLE */
  __u32 reserved;
  __u64 obj_addr;
  __u64 offset;
  __u64 size;
};

/* One task in the task BO (packed in the vendor header; the layout has no padding). */
struct rknpu_task {
  __u32 flags;
  __u32 op_idx;
  __u32 enable_mask;   /* 0xd in MTX; never written to hardware by the kernel */
  __u32 int_mask;      /* completion bits, whole pairs: 0x300 = DPU_0|DPU_1 */
  __u32 int_clear;     /* 0x1ffff */
  __u32 int_status;    /* out: written into the last task of a range */
  __u32 regcfg_amount; /* 64-bit regcmd entries EXCLUDING the 4 PC trailer entries */
  __u32 regcfg_offset;
  __u64 regcmd_addr; /* IOVA of the task's regcmd */
} __attribute__((packed));

struct rknpu_subcore_task {
  __u32 task_start;
  __u32 task_number;
};

struct rknpu_submit {
  __u32 flags;   /* RKNPU_JOB_* */
  __u32 timeout; /* ms */
  __u32 task_start;
  __u32 task_number;
  __u32 task_counter; /* out: tasks completed */
  __s32 priority;
  __u64 task_obj_addr;   /* obj_addr of the task BO */
  __u32 iommu_domain_id; /* older drivers: __u64 regcfg_obj_addr here */
  __u32 reserved;
  __u64 task_base_addr; /* written to PC_TASK_DMA_BASE_ADDR; MTX passes 0 */
  __s64 hw_elapse_time; /* out, ns (ktime_sub in rknpu_job.c); older: __u64 user_data */
  __u32 core_mask;      /* 0 auto, 1/2/4 one core, 3 cores 0+1, 7 all */
  __s32 fence_fd;
  struct rknpu_subcore_task subcore_task[5]; /* 1-2 cores: [core]; 3 cores: [core + 2] */
};

#define DRM_RKNPU_ACTION 0x00
#define DRM_RKNPU_SUBMIT 0x01
#define DRM_RKNPU_MEM_CREATE 0x02
#define DRM_RKNPU_MEM_MAP 0x03
#define DRM_RKNPU_MEM_DESTROY 0x04
#define DRM_RKNPU_MEM_SYNC 0x05

#define DRM_IOCTL_RKNPU_ACTION DRM_IOWR(DRM_COMMAND_BASE + DRM_RKNPU_ACTION, struct rknpu_action)
#define DRM_IOCTL_RKNPU_SUBMIT DRM_IOWR(DRM_COMMAND_BASE + DRM_RKNPU_SUBMIT, struct rknpu_submit)
#define DRM_IOCTL_RKNPU_MEM_CREATE \
  DRM_IOWR(DRM_COMMAND_BASE + DRM_RKNPU_MEM_CREATE, struct rknpu_mem_create)
#define DRM_IOCTL_RKNPU_MEM_CREATE_V0 \
  DRM_IOWR(DRM_COMMAND_BASE + DRM_RKNPU_MEM_CREATE, struct rknpu_mem_create_v0)
#define DRM_IOCTL_RKNPU_MEM_MAP DRM_IOWR(DRM_COMMAND_BASE + DRM_RKNPU_MEM_MAP, struct rknpu_mem_map)
#define DRM_IOCTL_RKNPU_MEM_DESTROY \
  DRM_IOWR(DRM_COMMAND_BASE + DRM_RKNPU_MEM_DESTROY, struct rknpu_mem_destroy)
#define DRM_IOCTL_RKNPU_MEM_SYNC \
  DRM_IOWR(DRM_COMMAND_BASE + DRM_RKNPU_MEM_SYNC, struct rknpu_mem_sync)

/* Sizes and numbers as published (docs/hardware.md section 1). */
ORK_UAPI_STATIC_ASSERT(sizeof(struct rknpu_action) == 8, "rknpu_action is 8 bytes");
ORK_UAPI_STATIC_ASSERT(sizeof(struct rknpu_mem_create) == 48, "rknpu_mem_create is 48 bytes");
ORK_UAPI_STATIC_ASSERT(sizeof(struct rknpu_mem_create_v0) == 40, "legacy mem_create is 40 bytes");
ORK_UAPI_STATIC_ASSERT(sizeof(struct rknpu_mem_map) == 16, "rknpu_mem_map is 16 bytes");
ORK_UAPI_STATIC_ASSERT(sizeof(struct rknpu_mem_destroy) == 16, "rknpu_mem_destroy is 16 bytes");
ORK_UAPI_STATIC_ASSERT(sizeof(struct rknpu_mem_sync) == 32, "rknpu_mem_sync is 32 bytes");
ORK_UAPI_STATIC_ASSERT(sizeof(struct rknpu_task) == 40, "rknpu_task is 40 bytes");
ORK_UAPI_STATIC_ASSERT(sizeof(struct rknpu_subcore_task) == 8, "rknpu_subcore_task is 8 bytes");
ORK_UAPI_STATIC_ASSERT(sizeof(struct rknpu_submit) == 104, "rknpu_submit is 104 bytes");
/* The IOMMU domain fields (0.9.x): which of the driver's 16 domains a BO is created in and a
 * job runs in (docs/kernel-interfaces.md "Windows"). */
ORK_UAPI_STATIC_ASSERT(offsetof(struct rknpu_mem_create, iommu_domain_id) == 40, "mem_create domain at 40");
ORK_UAPI_STATIC_ASSERT(offsetof(struct rknpu_submit, iommu_domain_id) == 32, "submit domain at 32");
ORK_UAPI_STATIC_ASSERT(DRM_IOCTL_RKNPU_ACTION == 0xC0086440u, "ACTION ioctl number");
ORK_UAPI_STATIC_ASSERT(DRM_IOCTL_RKNPU_SUBMIT == 0xC0686441u, "SUBMIT ioctl number");
ORK_UAPI_STATIC_ASSERT(DRM_IOCTL_RKNPU_MEM_CREATE == 0xC0306442u, "MEM_CREATE ioctl number");
ORK_UAPI_STATIC_ASSERT(DRM_IOCTL_RKNPU_MEM_CREATE_V0 == 0xC0286442u, "legacy MEM_CREATE number");
ORK_UAPI_STATIC_ASSERT(DRM_IOCTL_RKNPU_MEM_MAP == 0xC0106443u, "MEM_MAP ioctl number");
ORK_UAPI_STATIC_ASSERT(DRM_IOCTL_RKNPU_MEM_DESTROY == 0xC0106444u, "MEM_DESTROY ioctl number");
ORK_UAPI_STATIC_ASSERT(DRM_IOCTL_RKNPU_MEM_SYNC == 0xC0206445u, "MEM_SYNC ioctl number");

#ifdef __cplusplus
}
#endif

#endif /* ORK_UAPI_RKNPU_IOCTL_H */
