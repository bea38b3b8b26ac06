// ork_stream_bench internals: one cold pass per source (GB/s), one pass with simulated
// compute per layer (per-layer time / max(I/O, compute), hit rate), and fio's sequential
// O_DIRECT io_uring read of the same file as the baseline of the same run.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "driver/common/result.h"
#include "lib/io/loader.h"

namespace ork::io::tools {

struct BenchConfig {
  std::string path;
  std::vector<Extent> layers;
  LoaderOptions options;      // source overwritten per run
  double compute_us = 0;      // simulated compute per layer; 0 = no compute pass
};

struct ColdRun {
  double seconds = 0;
  uint64_t bytes = 0;
  double gbps() const { return seconds > 0 ? double(bytes) / seconds / 1e9 : 0; }
  LoaderStats stats;
};

struct ComputeRun {
  double layer_us = 0;        // mean wall time per layer at steady state (load + compute)
  double compute_us = 0;      // mean measured compute per layer (checksum + spin)
  double io_us = 0;           // per-layer I/O time from the cold run of the same source
  double ratio = 0;           // layer_us / max(io_us, compute_us); 1.0 = perfect overlap
  size_t steady_layers = 0;   // layers counted (the first n_slots are warm-up)
  std::vector<uint64_t> checksums;  // per layer, to compare sources byte for byte
  LoaderStats stats;
};

// Drops the file's pages from the page cache (POSIX_FADV_DONTNEED; the file must be clean,
// i.e. written and fsync'd), so the next buffered read or mmap starts cold.
Status drop_file_cache(const std::string& path);

Result<ColdRun> run_cold(const BenchConfig& config, SourceKind source);
Result<ComputeRun> run_compute(const BenchConfig& config, SourceKind source, double io_us);

// 64-bit checksum of a layer (multiply-xor over 8-byte words): cheap enough to be part of
// the simulated compute, strong enough to catch any differing byte between sources.
uint64_t layer_checksum(std::span<const std::byte> bytes);

struct FioResult {
  double gbps = 0;
  std::string command;
};
// fio --rw=read --direct=1 --ioengine=io_uring over the file; nullopt when fio is missing.
Result<std::optional<FioResult>> run_fio(const std::string& path, uint64_t bs_bytes,
                                         unsigned iodepth);

}  // namespace ork::io::tools
