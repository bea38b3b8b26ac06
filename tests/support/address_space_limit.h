// Whether a lowered RLIMIT_AS takes effect here. qemu-user accepts setrlimit(RLIMIT_AS) without
// passing it to the host (it would bound the emulator itself), so under qemu (CI's arm64 step)
// the limit reads back unchanged and tests of it cannot run; natively it always applies.
#pragma once

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>

namespace ork::test {

inline bool address_space_limit_applies() {
  const pid_t pid = ::fork();
  if (pid == 0) {
    rlimit r{};
    ::getrlimit(RLIMIT_AS, &r);
    r.rlim_cur = uint64_t{1} << 40;  // 1 TiB: below the default (unlimited), above any use
    if (::setrlimit(RLIMIT_AS, &r) != 0) ::_exit(1);
    rlimit back{};
    ::getrlimit(RLIMIT_AS, &back);
    ::_exit(back.rlim_cur == r.rlim_cur ? 0 : 1);
  }
  int status = 0;
  if (pid < 0 || ::waitpid(pid, &status, 0) != pid) return false;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

}  // namespace ork::test
