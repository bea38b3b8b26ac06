// The mmap engine (the predictive-prefetch design's third backend, docs/io.md): the file is mapped
// once; a read copies the layer out of the mapping into the slot. Not zero-copy: the win is the
// page cache doing the buffering, and the slot keeps a hard ceiling on resident weight memory.
#include <sys/mman.h>

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "lib/io/engine.h"

namespace ork::io {
namespace {

class MmapEngine final : public ReadEngine {
 public:
  MmapEngine(const StreamFile& file, void* map) : file_(file), map_(map) {}
  ~MmapEngine() override { file_.os().munmap(map_, file_.size_bytes()); }
  EngineKind kind() const override { return EngineKind::kMmap; }

  Status read(const ReadPlan& plan, size_t, std::span<std::byte> slot) override {
    if (plan.need_end > file_.size_bytes()) {
      return eof_error(file_, file_.size_bytes(), plan.need_end);
    }
    if (slot.size() < plan.head_bytes + plan.layer_bytes) {
      return make_error(-EINVAL, fmt::format("slot of {} bytes is smaller than the layer",
                                             slot.size()));
    }
    const auto* src = static_cast<const std::byte*>(map_);
    const uint64_t begin = plan.need_end - plan.layer_bytes;
    // Copied chunk by chunk so a close can interrupt a large layer.
    for (uint64_t done = 0; done < plan.layer_bytes; done += plan.chunk_bytes) {
      if (cancel_requested()) {
        ++counters_.cancelled;
        return make_error(-ECANCELED, "read cancelled: the loader is closing");
      }
      const uint64_t n = std::min(plan.chunk_bytes, plan.layer_bytes - done);
      std::memcpy(slot.data() + plan.head_bytes + done, src + begin + done, n);
      ++counters_.chunks;
      counters_.max_in_flight = 1;
    }
    return {};
  }

 private:
  const StreamFile& file_;
  void* map_;
};

}  // namespace

Result<std::unique_ptr<ReadEngine>> make_mmap_engine(const StreamFile& file) {
  if (file.size_bytes() == 0) {
    return make_error(-EINVAL, fmt::format("{}: cannot map an empty file", file.path()));
  }
  int error = 0;
  void* map = file.os().mmap_file(file.fd(), file.size_bytes(), &error);
  if (map == nullptr) {
    return make_error(error, fmt::format("mmap {}: {}", file.path(), errno_text(error)));
  }
  // Layers are consumed in order: ask for aggressive readahead.
  ::madvise(map, file.size_bytes(), MADV_SEQUENTIAL);
  return std::unique_ptr<ReadEngine>(std::make_unique<MmapEngine>(file, map));
}

}  // namespace ork::io
