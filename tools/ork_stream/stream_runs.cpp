#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstring>

#include <fmt/format.h>

#include "lib/io/file_os.h"
#include "tools/ork_stream/stream_bench.h"
#include "tools/ork_stream/stream_log.h"

namespace ork::io::tools {
namespace {

using Clock = std::chrono::steady_clock;

double us_since(Clock::time_point t0, Clock::time_point t1) {
  return std::chrono::duration<double, std::micro>(t1 - t0).count();
}

Result<std::unique_ptr<LayerLoader>> open_loader(const BenchConfig& c, SourceKind source) {
  Status st = drop_file_cache(c.path);
  if (!st) return st.error();
  LoaderOptions o = c.options;
  o.source = source;
  auto l = LayerLoader::open(c.path, c.layers, o);
  if (l && io_log_enabled()) {  // what runs, after the fallbacks (ORK_DEBUG=io)
    const LoaderStats s = (*l)->stats();
    for (const std::string& f : s.fallbacks) io_log(f);
    io_log(fmt::format("{}: source {} engine {}{}{}", c.path, source_name(s.source), engine_name(s.engine),
                       s.direct ? " O_DIRECT" : "", s.registered_buffers ? " registered" : ""));
  }
  return l;
}

// Checksum the layer, then spin until `compute_us` has passed since `start`: a stand-in for
// the matmuls of one decoder layer that keeps the compute thread's core busy.
uint64_t simulate_compute(std::span<const std::byte> layer, double compute_us) {
  const auto start = Clock::now();
  const uint64_t sum = layer_checksum(layer);
  while (us_since(start, Clock::now()) < compute_us) {
  }
  return sum;
}

}  // namespace

uint64_t layer_checksum(std::span<const std::byte> bytes) {
  uint64_t h = 0x9E3779B97F4A7C15ULL;
  size_t i = 0;
  for (; i + 8 <= bytes.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, bytes.data() + i, 8);
    h = (h ^ w) * 0x100000001B3ULL;  // FNV-1a's prime, applied per word
  }
  for (; i < bytes.size(); ++i) h = (h ^ static_cast<uint8_t>(bytes[i])) * 0x100000001B3ULL;
  return h ^ bytes.size();
}

Status drop_file_cache(const std::string& path) {
  FileOs& os = real_file_os();
  const int fd = os.open(path.c_str(), O_RDONLY);
  if (fd < 0) return make_error(fd, fmt::format("open {}: {}", path, errno_text(fd)));
  const int rc = os.fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  os.close(fd);
  if (rc < 0) return make_error(rc, fmt::format("fadvise(DONTNEED) {}: {}", path, errno_text(rc)));
  return {};
}

Result<ColdRun> run_cold(const BenchConfig& c, SourceKind source) {
  auto loader = open_loader(c, source);
  if (!loader) return loader.error();
  LayerLoader& l = *loader.value();
  ColdRun run;
  const auto t0 = Clock::now();
  for (size_t i = 0; i < l.layer_count(); ++i) {
    auto bytes = l.load(i);
    if (!bytes) return bytes.error();
    run.bytes += bytes->size();
  }
  run.seconds = us_since(t0, Clock::now()) / 1e6;
  run.stats = l.stats();
  return run;
}

Result<ComputeRun> run_compute(const BenchConfig& c, SourceKind source, double io_us) {
  auto loader = open_loader(c, source);
  if (!loader) return loader.error();
  LayerLoader& l = *loader.value();
  ComputeRun run;
  run.io_us = io_us;
  const size_t warmup = std::min(l.stats().n_slots, l.layer_count() - 1);
  double layer_sum = 0, compute_sum = 0;
  for (size_t i = 0; i < l.layer_count(); ++i) {
    const auto t0 = Clock::now();
    auto bytes = l.load(i);
    if (!bytes) return bytes.error();
    const auto t1 = Clock::now();
    run.checksums.push_back(simulate_compute(bytes.value(), c.compute_us));
    const auto t2 = Clock::now();
    if (i < warmup) continue;
    layer_sum += us_since(t0, t2);
    compute_sum += us_since(t1, t2);
    ++run.steady_layers;
  }
  run.layer_us = layer_sum / double(run.steady_layers);
  run.compute_us = compute_sum / double(run.steady_layers);
  run.ratio = run.layer_us / std::max(run.io_us, run.compute_us);
  run.stats = l.stats();
  return run;
}

}  // namespace ork::io::tools
