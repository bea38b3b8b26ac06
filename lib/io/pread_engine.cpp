// The pread engine: one chunk at a time on the calling thread. Used by the sync source (on
// the caller's thread) and the pread worker (on the loader's worker thread), and as the
// fallback when io_uring is refused.
#include <algorithm>

#include <fmt/format.h>

#include "lib/io/engine.h"

namespace ork::io {
namespace {

constexpr int kMaxAgainRetries = 64;  // EAGAIN is not expected on files; bound it anyway

class PreadEngine final : public ReadEngine {
 public:
  explicit PreadEngine(const StreamFile& file) : file_(file) {}
  EngineKind kind() const override { return EngineKind::kPread; }
  Status read(const ReadPlan& plan, size_t, std::span<std::byte> slot) override;

 private:
  Status read_chunk(const ReadPlan& plan, const Chunk& c, std::byte* dst);
  const StreamFile& file_;
};

Status PreadEngine::read(const ReadPlan& plan, size_t, std::span<std::byte> slot) {
  if (slot.size() < plan.slot_bytes()) {
    return make_error(-EINVAL, fmt::format("slot of {} bytes is smaller than the {} bytes read",
                                           slot.size(), plan.slot_bytes()));
  }
  for (size_t i = 0; i < plan.chunk_count(); ++i) {
    if (cancel_requested()) {
      ++counters_.cancelled;
      return make_error(-ECANCELED, "read cancelled: the loader is closing");
    }
    const Chunk c = plan.chunk(i);
    ++counters_.chunks;
    counters_.max_in_flight = 1;
    Status st = read_chunk(plan, c, slot.data() + c.slot_offset);
    if (!st) return st;
  }
  return {};
}

// Loops until `need` bytes arrived: EINTR retried, short reads continued from where they
// stopped (advancing by bytes read, not bytes asked). Under O_DIRECT a remainder that would
// start unaligned is re-read from the chunk start instead.
Status PreadEngine::read_chunk(const ReadPlan& plan, const Chunk& c, std::byte* dst) {
  uint64_t got = 0;
  int again = 0;
  while (got < c.need) {
    const ssize_t n = file_.os().pread(file_.fd(), dst + got, c.length - got,
                                       static_cast<off_t>(c.file_offset + got));
    if (n == -EINTR || (n == -EAGAIN && ++again <= kMaxAgainRetries)) {
      ++counters_.retries;
      continue;
    }
    if (n < 0) {
      return make_error(static_cast<int>(n),
                        fmt::format("pread {} at offset {} ({} bytes): {}", file_.path(),
                                    c.file_offset + got, c.length - got,
                                    errno_text(static_cast<int>(n))));
    }
    if (n == 0) return eof_error(file_, c.file_offset + got, plan.need_end);
    got += static_cast<uint64_t>(n);
    if (got < c.need) {
      ++counters_.short_reads;
      if (got % plan.align_bytes != 0) {  // O_DIRECT: an unaligned remainder cannot be read in place
        if (file_ends_at(file_, c.file_offset + got)) return eof_error(file_, c.file_offset + got, plan.need_end);
        got = 0;  // start the chunk over
      }
    }
  }
  return {};
}

}  // namespace

const char* engine_name(EngineKind kind) {
  switch (kind) {
    case EngineKind::kPread: return "pread";
    case EngineKind::kUring: return "io_uring";
    case EngineKind::kMmap: return "mmap";
  }
  return "?";
}

Error eof_error(const StreamFile& file, uint64_t offset, uint64_t need_end) {
  return make_error(-EIO, fmt::format("{}: unexpected end of file at offset {}: the layer "
                                      "ends at {} but the file has {} bytes",
                                      file.path(), offset, need_end, file.size_bytes()));
}

bool file_ends_at(const StreamFile& file, uint64_t offset) {
  uint64_t size = 0;
  return file.os().file_size(file.fd(), &size) >= 0 && size <= offset;
}

std::unique_ptr<ReadEngine> make_pread_engine(const StreamFile& file) {
  return std::make_unique<PreadEngine>(file);
}

}  // namespace ork::io
