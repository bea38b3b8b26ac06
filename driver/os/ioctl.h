// The one path into the kernel: nothing else calls ::ioctl, so retries and logs are in one place.
#pragma once

#include <string>

#include "driver/os/os.h"

namespace ork::driver {

// Calls os.ioctl(fd, request, arg); retries while it fails with -EINTR or -EAGAIN, at most
// kIoctlMaxRetries times. Returns 0 on success (a positive return is success too: some
// kernels return one) or -errno. Logged under ORK_DEBUG=ioctl with the ioctl's name.
int ioctl_retry(Os& os, int fd, unsigned long request, void* arg);

// How many retries ioctl_retry allows before it gives up and returns -EINTR/-EAGAIN.
inline constexpr int kIoctlMaxRetries = 1000;

// "RKNPU_SUBMIT", "ROCKET_CREATE_BO", "DRM_VERSION", ... or "ioctl 0x%08lx" when unknown.
std::string ioctl_name(unsigned long request);

}  // namespace ork::driver
