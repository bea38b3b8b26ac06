// Built when liburing is not found (ORK_HAVE_URING = 0): the io_uring source always falls
// back to the pread worker, with the reason in the stats.
#include "lib/io/engine.h"

namespace ork::io {

Result<std::unique_ptr<ReadEngine>> make_uring_engine(const StreamFile&,
                                                      std::span<const std::span<std::byte>>,
                                                      const UringOptions&,
                                                      std::vector<std::string>*, bool*) {
  return make_error(-ENOSYS, "io_uring setup refused: libork was built without liburing");
}

Status probe_uring(FileOs&) {
  return make_error(-ENOSYS, "io_uring setup refused: libork was built without liburing");
}

}  // namespace ork::io
