// The one ioctl path: -EINTR/-EAGAIN are retried, anything else is returned at once, a
// positive return is success, and a storm longer than kIoctlMaxRetries gives up.
#include <gtest/gtest.h>

#include <cerrno>

#include "driver/os/ioctl.h"

namespace ork::driver {
namespace {

// An Os whose ioctl fails `failures` times with `err`, then succeeds (or fails forever when
// failures < 0). Counts calls.
class FlakyOs final : public Os {
 public:
  FlakyOs(int failures, int err, int success_value = 0)
      : failures_(failures), err_(err), success_value_(success_value) {}
  int open(const char*, int) override { return -ENOENT; }
  int close(int) override { return 0; }
  int ioctl(int, unsigned long, void*) override {
    ++calls;
    if (failures_ < 0 || calls <= failures_) return -err_;  // the Os convention: -errno
    return success_value_;
  }
  void* mmap(void*, size_t, int, int, int, off_t, int* error) override {
    *error = -ENODEV;
    return nullptr;
  }
  int munmap(void*, size_t) override { return 0; }
  int poll(struct pollfd*, nfds_t, int) override { return 0; }
  std::vector<std::string> list_nodes(const char*) override { return {}; }
  int calls = 0;

 private:
  int failures_;
  int err_;
  int success_value_;
};

TEST(IoctlRetry, SucceedsAtOnce) {
  FlakyOs os(0, 0);
  EXPECT_EQ(ioctl_retry(os, 3, 0xC0686441, nullptr), 0);
  EXPECT_EQ(os.calls, 1);
}

TEST(IoctlRetry, RetriesEintrThenSucceeds) {
  FlakyOs os(7, EINTR);
  EXPECT_EQ(ioctl_retry(os, 3, 0xC0686441, nullptr), 0);
  EXPECT_EQ(os.calls, 8);
}

TEST(IoctlRetry, RetriesEagainThenSucceeds) {
  FlakyOs os(3, EAGAIN);
  EXPECT_EQ(ioctl_retry(os, 3, 0xC0686441, nullptr), 0);
  EXPECT_EQ(os.calls, 4);
}

TEST(IoctlRetry, GivesUpOnAnEndlessEintrStorm) {
  FlakyOs os(-1, EINTR);
  EXPECT_EQ(ioctl_retry(os, 3, 0xC0686441, nullptr), -EINTR);
  EXPECT_EQ(os.calls, kIoctlMaxRetries + 1);
}

TEST(IoctlRetry, GivesUpOnAnEndlessEagainStorm) {
  FlakyOs os(-1, EAGAIN);
  EXPECT_EQ(ioctl_retry(os, 3, 0xC0686441, nullptr), -EAGAIN);
  EXPECT_EQ(os.calls, kIoctlMaxRetries + 1);
}

TEST(IoctlRetry, OtherErrnoIsReturnedAtOnceAsNegative) {
  for (int err : {EINVAL, ETIMEDOUT, EIO, ENOMEM, EFAULT}) {
    FlakyOs os(-1, err);
    EXPECT_EQ(ioctl_retry(os, 3, 0xC0686441, nullptr), -err);
    EXPECT_EQ(os.calls, 1) << "errno " << err;
  }
}

TEST(IoctlRetry, APositiveReturnIsSuccess) {
  FlakyOs os(0, 0, 42);  // rocket PREP_BO once leaked remaining jiffies this way
  EXPECT_EQ(ioctl_retry(os, 3, 0x40106442, nullptr), 0);
}

// errno is not the channel (driver/os/os.h): an Os that returns -EIO while errno happens to
// hold EINTR (left by some earlier call) fails at once, without a retry.
class StaleErrnoOs final : public Os {
 public:
  int open(const char*, int) override { return -ENOENT; }
  int close(int) override { return 0; }
  int ioctl(int, unsigned long, void*) override {
    ++calls;
    errno = EINTR;
    return -EIO;
  }
  void* mmap(void*, size_t, int, int, int, off_t, int* error) override {
    *error = -ENODEV;
    return nullptr;
  }
  int munmap(void*, size_t) override { return 0; }
  int poll(struct pollfd*, nfds_t, int) override { return 0; }
  std::vector<std::string> list_nodes(const char*) override { return {}; }
  int calls = 0;
};

TEST(IoctlRetry, ErrnoIsNotTheChannel) {
  StaleErrnoOs os;
  EXPECT_EQ(ioctl_retry(os, 3, 0x40106442, nullptr), -EIO);
  EXPECT_EQ(os.calls, 1);
}

}  // namespace
}  // namespace ork::driver
