/* dma-buf sharing: the DRM core's PRIME ioctls (both kernel interfaces answer them) and the
 * dma-buf CPU-access sync ioctl.
 *
 * PRIME: struct drm_prime_handle and DRM_IOCTL_PRIME_{HANDLE_TO_FD,FD_TO_HANDLE} come from
 * libdrm's copy of the kernel's include/uapi/drm/drm.h; checked here against the published
 * layout (handle, flags, fd: 12 bytes; ioctls 0x2d and 0x2e of type 'd').
 * DMA_BUF_IOCTL_SYNC: written for libork from the published layout of the kernel's
 * include/uapi/linux/dma-buf.h (struct dma_buf_sync { __u64 flags; }, _IOW('b', 0, ...)).
 * The code is ours; sizes and ioctl numbers are checked at compile time.
 */
#ifndef ORK_UAPI_DMA_BUF_H
#define ORK_UAPI_DMA_BUF_H

#include <drm.h> /* libdrm: struct drm_prime_handle, DRM_IOCTL_PRIME_*, DRM_CLOEXEC, DRM_RDWR */

#ifdef __cplusplus
extern "C" {
#define ORK_UAPI_STATIC_ASSERT_DMABUF(cond, msg) static_assert(cond, msg)
#else
#define ORK_UAPI_STATIC_ASSERT_DMABUF(cond, msg) _Static_assert(cond, msg)
#endif

/* Brackets CPU access to a dma-buf: START before, END after, with the directions used. */
struct ork_dma_buf_sync {
  __u64 flags;
};
#define ORK_DMA_BUF_SYNC_READ (1 << 0)
#define ORK_DMA_BUF_SYNC_WRITE (2 << 0)
#define ORK_DMA_BUF_SYNC_RW (ORK_DMA_BUF_SYNC_READ | ORK_DMA_BUF_SYNC_WRITE)
#define ORK_DMA_BUF_SYNC_START (0 << 2)
#define ORK_DMA_BUF_SYNC_END (1 << 2)
#define ORK_DMA_BUF_SYNC_VALID_FLAGS_MASK (ORK_DMA_BUF_SYNC_RW | ORK_DMA_BUF_SYNC_END)
#define ORK_DMA_BUF_BASE 'b'
#define ORK_DMA_BUF_IOCTL_SYNC _IOW(ORK_DMA_BUF_BASE, 0, struct ork_dma_buf_sync)

ORK_UAPI_STATIC_ASSERT_DMABUF(sizeof(struct ork_dma_buf_sync) == 8, "dma_buf_sync is 8 bytes");
ORK_UAPI_STATIC_ASSERT_DMABUF(ORK_DMA_BUF_IOCTL_SYNC == 0x40086200u, "DMA_BUF_IOCTL_SYNC number");
ORK_UAPI_STATIC_ASSERT_DMABUF(sizeof(struct drm_prime_handle) == 12, "drm_prime_handle is 12 bytes");
ORK_UAPI_STATIC_ASSERT_DMABUF(DRM_IOCTL_PRIME_HANDLE_TO_FD == 0xC00C642Du, "PRIME_HANDLE_TO_FD number");
ORK_UAPI_STATIC_ASSERT_DMABUF(DRM_IOCTL_PRIME_FD_TO_HANDLE == 0xC00C642Eu, "PRIME_FD_TO_HANDLE number");

#ifdef __cplusplus
}
#endif

#endif /* ORK_UAPI_DMA_BUF_H */
