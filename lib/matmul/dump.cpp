// ORK_DUMP_REGCMD (dump.h).
#include "lib/matmul/dump.h"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <fmt/format.h>

namespace ork::matmul {

void dump_commands(const Plan& plan, int64_t group, int core, const std::vector<uint64_t>& entries) {
  static const char* dir = std::getenv("ORK_DUMP_REGCMD");
  if (!dir || !*dir) return;
  static std::atomic<unsigned> sequence{0};
  const std::string path = fmt::format("{}/{:04}-{}-{}x{}x{}-g{}-core{}.regcmd", dir, sequence++, dtype_name(plan.dtype),
                                       plan.shape.m, plan.shape.k, plan.shape.n, group, core);
  std::FILE* f = std::fopen(path.c_str(), "wb");
  bool ok = f != nullptr;
  if (ok) {
    // Little-endian on every host libork builds for (x86-64, aarch64), as the NPU reads it.
    // An empty list writes nothing: fwrite's buffer is declared nonnull, and an empty
    // vector's data() may be null.
    if (!entries.empty())
      ok = std::fwrite(entries.data(), sizeof(uint64_t), entries.size(), f) == entries.size();
    ok = std::fclose(f) == 0 && ok;
  }
  if (!ok) std::fprintf(stderr, "libork: ORK_DUMP_REGCMD: cannot write %s: %s\n", path.c_str(), std::strerror(errno));
}

}  // namespace ork::matmul
