// The ORK_IO_NO_* switches and the engine choice with its fallback (read_modes.h).
#include "lib/io/read_modes.h"

#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

namespace ork::io {

IoEnv read_io_env() {
  auto set = [](const char* name) {
    const char* v = std::getenv(name);
    return v != nullptr && *v != '\0' && std::strcmp(v, "0") != 0;
  };
  return {.no_uring = set("ORK_IO_NO_URING"), .no_direct = set("ORK_IO_NO_DIRECT"),
          .no_register = set("ORK_IO_NO_REGISTER")};
}

ReadModes apply_io_env(ReadModes m, bool use_env, std::vector<std::string>* fallbacks) {
  const IoEnv env = use_env ? read_io_env() : IoEnv{};
  if (m.uring && env.no_uring) {
    fallbacks->push_back("io_uring disabled by ORK_IO_NO_URING -> pread worker");
    m.uring = false;
  }
  if (m.direct && env.no_direct) {
    fallbacks->push_back("O_DIRECT disabled by ORK_IO_NO_DIRECT -> buffered reads");
    m.direct = false;
  }
  if (m.register_buffers && env.no_register) {
    if (m.uring) fallbacks->push_back("buffer registration disabled by ORK_IO_NO_REGISTER -> plain reads");
    m.register_buffers = false;
  }
  return m;
}

std::unique_ptr<ReadEngine> make_read_engine(const StreamFile& file, std::span<const std::span<std::byte>> slots,
                                             bool uring, const UringOptions& options,
                                             std::vector<std::string>* fallbacks, bool* registered) {
  if (uring) {
    auto e = make_uring_engine(file, slots, options, fallbacks, registered);
    if (e) return std::move(e.value());
    fallbacks->push_back(fmt::format("{} -> pread worker", e.error().message));
  }
  return make_pread_engine(file);
}

}  // namespace ork::io
