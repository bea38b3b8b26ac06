// ORK_DUMP_REGCMD (dump.h).
#include "lib/matmul/dump.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "driver/common/safe_file.h"

namespace ork::matmul {

void dump_commands(const Plan& plan, int64_t group, int core, const std::vector<uint64_t>& entries) {
  static const char* dir = std::getenv("ORK_DUMP_REGCMD");
  if (!dir || !*dir) return;
  static std::atomic<unsigned> sequence{0};
  const std::string path = fmt::format("{}/{:04}-{}-{}x{}x{}-g{}-core{}.regcmd", dir, sequence++, dtype_name(plan.dtype),
                                       plan.shape.m, plan.shape.k, plan.shape.n, group, core);
  // Little-endian on every host libork builds for (x86-64, aarch64), as the NPU reads it.
  // Written beside its path and renamed into place (driver/common/safe_file.h): never over a
  // FIFO or a device node, never half a list.
  const Status s = write_file_atomically(
      path, {reinterpret_cast<const char*>(entries.data()), entries.size() * sizeof(uint64_t)});
  if (!s) std::fprintf(stderr, "libork: ORK_DUMP_REGCMD: cannot write %s\n", s.error().message.c_str());
}

}  // namespace ork::matmul
