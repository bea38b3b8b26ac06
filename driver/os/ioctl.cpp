// The one path into the kernel (one place retries EINTR/EAGAIN and returns -errno) and the ioctl ->
// name table for logs.
#include "driver/os/ioctl.h"

#include <fmt/format.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "driver/os/debug.h"
#include "uapi/dma_buf.h"
#include "uapi/rknpu_ioctl.h"
#include "uapi/rocket_accel.h"

namespace ork::driver {
namespace {

struct IoctlEntry {
  unsigned long request;
  const char* name;
};

// Every ioctl libork or its emulator speaks. Both MEM_CREATE sizes have their own entry.
constexpr IoctlEntry kIoctlNames[] = {
    {DRM_IOCTL_VERSION, "DRM_VERSION"},
    {DRM_IOCTL_GEM_CLOSE, "DRM_GEM_CLOSE"},
    {DRM_IOCTL_PRIME_HANDLE_TO_FD, "DRM_PRIME_HANDLE_TO_FD"},
    {DRM_IOCTL_PRIME_FD_TO_HANDLE, "DRM_PRIME_FD_TO_HANDLE"},
    {ORK_DMA_BUF_IOCTL_SYNC, "DMA_BUF_IOCTL_SYNC"},
    {DRM_IOCTL_RKNPU_ACTION, "RKNPU_ACTION"},
    {DRM_IOCTL_RKNPU_SUBMIT, "RKNPU_SUBMIT"},
    {DRM_IOCTL_RKNPU_MEM_CREATE, "RKNPU_MEM_CREATE"},
    {DRM_IOCTL_RKNPU_MEM_CREATE_V0, "RKNPU_MEM_CREATE_V0"},
    {DRM_IOCTL_RKNPU_MEM_MAP, "RKNPU_MEM_MAP"},
    {DRM_IOCTL_RKNPU_MEM_DESTROY, "RKNPU_MEM_DESTROY"},
    {DRM_IOCTL_RKNPU_MEM_SYNC, "RKNPU_MEM_SYNC"},
    {DRM_IOCTL_ROCKET_CREATE_BO, "ROCKET_CREATE_BO"},
    {DRM_IOCTL_ROCKET_SUBMIT, "ROCKET_SUBMIT"},
    {DRM_IOCTL_ROCKET_PREP_BO, "ROCKET_PREP_BO"},
    {DRM_IOCTL_ROCKET_FINI_BO, "ROCKET_FINI_BO"},
};

void log_result(int fd, unsigned long request, int result, int retries,
                std::chrono::steady_clock::duration took) {
  if (!debug_enabled("ioctl")) return;
  long long us = std::chrono::duration_cast<std::chrono::microseconds>(took).count();
  std::string outcome =
      result == 0 ? std::string("0") : fmt::format("-{} ({})", -result, std::strerror(-result));
  debug_line("ioctl", fmt::format("fd {} {} -> {}, {} us{}", fd, ioctl_name(request), outcome, us,
                                  retries ? fmt::format(", {} retries", retries) : ""));
}

}  // namespace

std::string ioctl_name(unsigned long request) {
  for (const IoctlEntry& entry : kIoctlNames) {
    if (entry.request == request) return entry.name;
  }
  return fmt::format("ioctl 0x{:08x}", request);
}

int ioctl_retry(Os& os, int fd, unsigned long request, void* arg) {
  auto start = std::chrono::steady_clock::now();
  int retries = 0;
  for (;;) {
    int rc = os.ioctl(fd, request, arg);
    if (rc >= 0) {
      // Success. Some kernels return positive values here (rocket PREP_BO before its fix
      // returned remaining jiffies); the convention above this line is 0.
      log_result(fd, request, 0, retries, std::chrono::steady_clock::now() - start);
      return 0;
    }
    if ((rc == -EINTR || rc == -EAGAIN) && retries < kIoctlMaxRetries) {
      ++retries;
      continue;
    }
    log_result(fd, request, rc, retries, std::chrono::steady_clock::now() - start);
    return rc;
  }
}

}  // namespace ork::driver
