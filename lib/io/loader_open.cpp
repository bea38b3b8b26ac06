// LayerLoader construction: options checked, environment knobs applied, the file opened
// (O_DIRECT or buffered), slots allocated and touched once, and the tensor reader started
// over them (it chooses the engine with its fallbacks), with its I/O thread when one helps.
#include <algorithm>

#include <fmt/format.h>

#include "lib/io/loader.h"
#include "lib/io/read_modes.h"

namespace ork::io {
namespace {

Status check_options(const LoaderOptions& o, const std::vector<Extent>& layers) {
  if (layers.empty()) return make_error(-EINVAL, "no layers: need at least one");
  for (size_t i = 0; i < layers.size(); ++i) {
    if (layers[i].length == 0) return make_error(-EINVAL, fmt::format("layer {} is empty", i));
  }
  if (o.n_slots == 0) return make_error(-EINVAL, "n_slots = 0: must be >= 1");
  if (!is_pow2(o.chunk_bytes) || o.chunk_bytes < 4096 || o.chunk_bytes > (uint64_t{64} << 20)) {
    return make_error(-EINVAL, fmt::format("chunk_bytes = {}: must be a power of two in "
                                           "[4 KiB, 64 MiB]", o.chunk_bytes));
  }
  if (o.queue_depth == 0 || o.queue_depth > 256) {
    return make_error(-EINVAL, fmt::format("queue_depth = {}: must be 1..256", o.queue_depth));
  }
  if (!is_pow2(o.max_iovec_bytes) || o.max_iovec_bytes > (uint64_t{1} << 30)) {
    return make_error(-EINVAL, fmt::format("max_iovec_bytes = {}: must be a power of two "
                                           "<= 1 GiB", o.max_iovec_bytes));
  }
  return {};
}

}  // namespace

const char* source_name(SourceKind kind) {
  switch (kind) {
    case SourceKind::kSync: return "sync";
    case SourceKind::kWorker: return "worker";
    case SourceKind::kUring: return "uring";
    case SourceKind::kMmap: return "mmap";
  }
  return "?";
}

Result<SourceKind> parse_source(const std::string& name) {
  for (SourceKind k : {SourceKind::kSync, SourceKind::kWorker, SourceKind::kUring,
                       SourceKind::kMmap}) {
    if (name == source_name(k)) return k;
  }
  return make_error(-EINVAL, fmt::format("unknown source \"{}\": expected sync, worker, "
                                         "uring or mmap", name));
}

LayerLoader::LayerLoader(Key, FileOs& os, std::vector<Extent> layers, const LoaderOptions& options)
    : os_(os), layers_(std::move(layers)), options_(options) {}

Result<std::unique_ptr<LayerLoader>> LayerLoader::open(const std::string& path,
                                                       std::vector<Extent> layers,
                                                       const LoaderOptions& options,
                                                       FileOs& os) {
  Status st = check_options(options, layers);
  if (!st) return st.error();
  auto loader = std::make_unique<LayerLoader>(Key{}, os, std::move(layers), options);
  st = loader->setup(path);
  if (!st) return st.error();
  return loader;
}

// The source and O_DIRECT after the environment's overrides (read_modes.h, each override
// recorded as a fallback); returns whether the file should be opened with O_DIRECT.
bool LayerLoader::resolve_modes() {
  LoaderOptions& o = options_;
  stats_.source = o.source;  // what was asked for, even when the environment overrides it
  const bool uring = o.source == SourceKind::kUring;
  bool want_direct = o.direct == DirectMode::kOn || (o.direct == DirectMode::kAuto && uring);
  if (o.source == SourceKind::kMmap) want_direct = false;  // the page cache is the point
  const ReadModes m = apply_io_env({.uring = uring, .direct = want_direct, .register_buffers = o.register_buffers},
                                   o.use_env, &stats_.fallbacks);
  if (uring && !m.uring) o.source = SourceKind::kWorker;
  o.register_buffers = m.register_buffers;
  return m.direct;
}

// Every layer's read plan against the opened file's size and alignment, then the slots, each
// as large as the largest plan so that any slot can hold any layer.
Status LayerLoader::plan_slots(const std::string& path, const StreamFile& file) {
  uint64_t slot_bytes = 0;
  for (size_t i = 0; i < layers_.size(); ++i) {
    const Extent& e = layers_[i];
    if (e.end() > file.size_bytes() || e.end() < e.offset) {
      return make_error(-EINVAL, fmt::format("layer {} ends at byte {} but {} has {} bytes", i,
                                             e.offset + e.length, path, file.size_bytes()));
    }
    auto plan = plan_read(e, file.align_bytes(), options_.chunk_bytes);
    if (!plan) return plan.error();
    slot_bytes = std::max(slot_bytes, plan->slot_bytes());
    plans_.push_back(plan.value());
  }
  for (size_t i = 0; i < options_.n_slots; ++i) {
    auto slot = SlotBuffer::allocate(slot_bytes);
    if (!slot) return slot.error();
    slots_.push_back(Slot{.buffer = std::move(slot.value())});
  }
  return {};
}

Status LayerLoader::setup(const std::string& path) {
  LoaderOptions& o = options_;
  LoaderStats& s = stats_;
  const bool single = o.source == SourceKind::kSync || o.source == SourceKind::kMmap;
  if (single) o.n_slots = 1;
  const bool want_direct = resolve_modes();
  auto file = StreamFile::open(os_, path, want_direct, &s.fallbacks);
  if (!file) return file.error();
  s.direct = file->direct();
  s.align_bytes = file->align_bytes();
  Status st = plan_slots(path, *file);
  if (!st) return st;
  s.n_slots = o.n_slots;
  s.async = o.n_slots > 1 && !single;  // the design's spawn guard: a thread only when it helps
  st = start_reader(std::move(*file));
  if (!st) return st;
  o.prefetch_depth = std::min(o.prefetch_depth, o.n_slots - 1);
  s.prefetch_depth = o.prefetch_depth;
  return {};
}

// The reader over the slots: the source's engine (io_uring for kUring, falling back to pread;
// pread for kSync and kWorker; the mapping for kMmap), its thread for the async sources.
Status LayerLoader::start_reader(StreamFile file) {
  std::vector<std::span<std::byte>> spans;
  for (Slot& s : slots_) spans.push_back(s.buffer.bytes());
  const ReaderOptions r{.chunk_bytes = options_.chunk_bytes,
                        .uring = options_.source == SourceKind::kUring,
                        .mmap = options_.source == SourceKind::kMmap,
                        .uring_options = {.queue_depth = options_.queue_depth,
                                          .register_buffers = options_.register_buffers,
                                          .max_iovec_bytes = options_.max_iovec_bytes},
                        .threaded = stats_.async,
                        .allow_head = true,      // a layer starts anywhere; head_bytes into its slot
                        .keep_timings = false};  // the loader runs for ever: totals only
  ReaderInfo info;
  info.fallbacks = std::move(stats_.fallbacks);
  auto reader = TensorReader::start(std::move(file), std::move(spans), r, std::move(info));
  if (!reader) return reader.error();
  reader_ = std::move(*reader);
  stats_.engine = reader_->info().kind;
  stats_.registered_buffers = reader_->info().registered;
  stats_.fallbacks = reader_->info().fallbacks;
  return {};
}

}  // namespace ork::io
