// ork_stream_bench: streams a safetensors file through each lib/io source, cold, and prints
// GB/s next to fio's sequential O_DIRECT io_uring read of the same file in the same run;
// then, with simulated compute per layer, per-layer time / max(I/O, compute) and the hit
// rate. Exit 0 ok, 1 a check failed (bytes differ between sources, a source failed, or a
// target missed with --check), 2 bad usage or a file it cannot take. Tensors are grouped
// into layers by --layer-pattern (lib/io/safetensors.h: any PREFIX.N. by default).
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <map>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lib/io/safetensors.h"
#include "tools/common/cli.h"
#include "tools/common/input_limits.h"
#include "tools/common/size_arg.h"
#include "tools/ork_stream/loader_json.h"
#include "tools/ork_stream/stream_bench.h"
#include "tools/ork_stream/synthetic_safetensors.h"

namespace ork::io::tools {
namespace {

constexpr double kFioTarget = 0.9;      // io_uring source >= 0.9 x fio (docs/io.md)
constexpr double kOverlapTarget = 1.1;  // per-layer / max(I/O, compute) <= 1.1 (docs/io.md)
constexpr size_t kMaxSlots = 4096;        // ring slots (each holds a layer; memory checked too)
constexpr uint64_t kMaxChunk = uint64_t{1} << 30;  // bytes per read

struct Args {
  std::string file, tmpdir = "/tmp", size = "2G", chunk = "2M", sources = "sync,worker,uring,mmap";
  std::string layer_pattern = kDefaultLayerPattern;
  bool create = false;
  uint64_t layers = 32;
  size_t slots = 3, depth = 2;
  unsigned qd = 8;
  double compute_us = -1;
  bool keep = false, no_fio = false, json = false, check = false;
};

struct SourceResult {
  SourceKind source;
  ColdRun cold;
  std::optional<ComputeRun> compute;
};

// Creates the synthetic file when none was given (in --tmpdir, deleted at exit unless
// --keep) or when --create asks for it at --file; a --file that does not exist is an error
// otherwise (a typo must not quietly benchmark a file of its own). Returns whether to
// delete the file at exit.
Result<bool> prepare_file(Args& a) {
  if (!a.file.empty() && std::filesystem::exists(a.file) && !a.create) {
    // A FIFO or a device is refused by name before anything opens it (it would block).
    if (Status st = check_regular_input(a.file); !st) return make_error(-EINVAL, "--file " + st.error().message);
    return false;
  }
  if (!a.file.empty() && !a.create) {
    return make_error(-EINVAL, fmt::format("--file {}: no such file (--create writes a synthetic model there)", a.file));
  }
  auto size = parse_size(a.size);
  if (!size) return size.error();
  auto spec = spec_for_size(size.value(), a.layers);
  if (!spec) return spec.error();
  auto bytes = synthetic_file_bytes(spec.value());
  if (!bytes) return bytes.error();
  const bool temporary = a.file.empty();
  if (temporary) a.file = a.tmpdir + fmt::format("/ork_stream_bench.{}.safetensors", getpid());
  if (const std::string e = ork::tools::check_disk("--size " + a.size, a.file, bytes.value()); !e.empty())
    return make_error(-EINVAL, e);
  if (!a.json) fmt::print("writing {} ({} layers)...\n", a.file, a.layers);
  std::fflush(stdout);
  auto written = write_synthetic_safetensors(a.file, spec.value());
  if (!written) return written.error();
  return temporary && !a.keep;
}

std::string fallbacks_text(const LoaderStats& s) {
  std::string t;
  for (const auto& f : s.fallbacks) t += (t.empty() ? "" : "; ") + f;
  return t.empty() ? "-" : t;
}

void print_cold(const std::vector<SourceResult>& rs, double fio) {
  fmt::print("\ncold stream (O_DIRECT, or the file's page cache dropped first):\n");
  fmt::print("  {:<7} {:<9} {:<6} {:<4} {:>7} {:>7}  {}\n", "source", "engine", "direct", "reg",
             "GB/s", "x fio", "fallbacks");
  for (const auto& r : rs) {
    const LoaderStats& s = r.cold.stats;
    fmt::print("  {:<7} {:<9} {:<6} {:<4} {:>7.3f} {:>7}  {}\n", source_name(r.source),
               engine_name(s.engine), s.direct ? "yes" : "no", s.registered_buffers ? "yes" : "no",
               r.cold.gbps(), fio > 0 ? fmt::format("{:.2f}", r.cold.gbps() / fio) : "-",
               fallbacks_text(s));
  }
}

void print_compute(const std::vector<SourceResult>& rs, double compute_us) {
  fmt::print("\nsimulated compute {:.0f} us per layer (checksum + spin), steady state:\n",
             compute_us);
  fmt::print("  {:<7} {:>10} {:>10} {:>11} {:>8} {:>9}\n", "source", "layer us", "I/O us",
             "compute us", "ratio", "hit rate");
  for (const auto& r : rs) {
    if (!r.compute) continue;
    const ComputeRun& c = *r.compute;
    fmt::print("  {:<7} {:>10.0f} {:>10.0f} {:>11.0f} {:>8.3f} {:>8.1f}%\n", source_name(r.source),
               c.layer_us, c.io_us, c.compute_us, c.ratio, 100.0 * c.stats.hit_rate());
  }
  fmt::print("  ratio = per-layer time / max(I/O, compute); 1.0 = I/O fully hidden\n");
}

nlohmann::json to_json(const Args& a, uint64_t file_bytes, const std::vector<SourceResult>& rs,
                       const std::vector<FioResult>& fio, bool identical) {
  nlohmann::json j = {{"file", a.file}, {"bytes", file_bytes}, {"layers", a.layers},
                      {"identical_bytes", identical}};
  for (const auto& f : fio) j["fio"].push_back({{"gbps", f.gbps}, {"command", f.command}});
  for (const auto& r : rs) {
    nlohmann::json s = {{"source", source_name(r.source)}, {"gbps", r.cold.gbps()},
                        {"seconds", r.cold.seconds}, {"stats", stats_to_json(r.cold.stats)}};
    if (r.compute) {
      s["compute"] = {{"layer_us", r.compute->layer_us}, {"io_us", r.compute->io_us},
                      {"compute_us", r.compute->compute_us}, {"ratio", r.compute->ratio},
                      {"hit_rate", r.compute->stats.hit_rate()},
                      {"steady_layers", r.compute->steady_layers}};
    }
    j["sources"].push_back(s);
  }
  return j;
}

}  // namespace
}  // namespace ork::io::tools

namespace ork::io::tools {
namespace {

int parse_args(int argc, char** argv, Args& a) {
  using ork::tools::add_number;
  CLI::App app{"Stream a safetensors file through each lib/io source (cold) and compare with "
               "fio in the same run; then overlap with simulated compute. Exit 0 ok, 1 a check "
               "failed, 2 bad usage or input."};
  ork::tools::add_conventions(app, "ork_stream_bench");
  app.add_option("-f,--file", a.file, "model file (must exist, unless --create); default: a synthetic file in --tmpdir");
  app.add_flag("--create", a.create, "write a synthetic model of --size/--layers at --file (replacing it)");
  app.add_option("--layer-pattern", a.layer_pattern,
                 "regular expression whose first group is the layer number (default: any PREFIX.N.; "
                 "no match at all: one layer per tensor)");
  app.add_option("--tmpdir", a.tmpdir, "where to create the file when --file is not given");
  app.add_option("-s,--size", a.size, "size of the file to create (K/M/G/T)");
  add_number(app, "-l,--layers", a.layers, "layers of the file to create", uint64_t{1}, kMaxSyntheticLayers);
  app.add_option("--sources", a.sources, "comma list of sync, worker, uring, mmap");
  add_number(app, "--slots", a.slots, "ring slots for worker and uring (memory: slots x the largest layer)",
             size_t{1}, kMaxSlots);
  add_number(app, "--depth", a.depth, "prefetch depth (layers ahead)", size_t{0}, kMaxSlots);
  app.add_option("--chunk", a.chunk, "bytes per read (also fio's --bs)");
  add_number(app, "--qd", a.qd, "io_uring reads in flight (also fio's --iodepth)", 1u, 4096u);
  add_number(app, "--compute-us", a.compute_us,
             "simulated compute per layer in us; -1 = the io_uring source's I/O time per "
             "layer, 0 = skip the compute pass", -1.0, 1e9);
  app.add_flag("--keep", a.keep, "keep the file this run created");
  app.add_flag("--no-fio", a.no_fio, "do not run fio");
  ork::tools::add_json(app, a.json);
  app.add_flag("--check", a.check, "exit 1 when a target is missed (io_uring >= 0.9 x fio, "
               "overlap ratio <= 1.1)");
  return ork::tools::parse_command_line(app, argc, argv);
}

Result<std::vector<SourceKind>> parse_sources(const std::string& list) {
  std::vector<SourceKind> out;
  size_t pos = 0;
  while (pos <= list.size()) {
    const size_t comma = std::min(list.find(',', pos), list.size());
    auto k = parse_source(list.substr(pos, comma - pos));
    if (!k) return k.error();
    out.push_back(k.value());
    pos = comma + 1;
  }
  return out;
}

// Progress on a terminal (stderr), one line per finished pass; silent in pipes and --json.
void progress(const Args& a, const std::string& line) {
  if (!a.json && ::isatty(STDERR_FILENO)) std::fprintf(stderr, "  .. %s\n", line.c_str());
}

int fail(const std::string& what, int code) {
  std::fprintf(stderr, "ork_stream_bench: %s\n", what.c_str());
  return code;
}

// The layers of the file (by --layer-pattern) and the loader's options; the ring's memory
// checked before the loader allocates it (--slots 100000 once took the machine down at 21 GB).
Result<BenchConfig> make_config(const Args& a, const SafetensorsFile& st, uint64_t chunk) {
  auto layout = group_layers(st, a.layer_pattern);
  if (!layout) return make_error(layout.error().code, "--layer-pattern: " + layout.error().message);
  uint64_t largest = 0;
  for (const Layer& l : layout->layers) largest = std::max(largest, l.extent.length);
  if (const std::string e = ork::tools::check_memory(fmt::format("--slots {} of {} (the largest layer)", a.slots,
                                                                 format_bytes(largest)),
                                                     a.slots * largest);
      !e.empty())
    return make_error(-ENOMEM, e);
  return BenchConfig{.path = a.file, .layers = layer_extents(layout.value()),
                     .options = LoaderOptions{.n_slots = a.slots, .prefetch_depth = a.depth,
                                              .chunk_bytes = chunk, .queue_depth = a.qd}};
}

// Each source again with the simulated compute overlapping its reads; *identical: every
// source gave the same bytes. 0, or the exit code of a failure.
int compute_pass(const Args& a, BenchConfig& cfg, std::vector<SourceResult>& results, bool* identical) {
  for (auto& r : results) {
    const double io_us = r.cold.seconds * 1e6 / double(cfg.layers.size());
    auto c = run_compute(cfg, r.source, io_us);
    if (!c) return fail(fmt::format("{}: {}", source_name(r.source), c.error().message), 1);
    r.compute = c.value();
    progress(a, fmt::format("compute {}: ratio {:.3f}", source_name(r.source), c->ratio));
    *identical = *identical && r.compute->checksums == results.front().compute->checksums;
  }
  return 0;
}

// The targets against fio and the overlap bound, met or not, each with a line in *text.
bool check_targets(const SourceResult* uring, double fio_gbps, std::string* text) {
  bool ok = true;
  if (uring != nullptr && fio_gbps > 0) {
    const double x = uring->cold.gbps() / fio_gbps;
    ok = ok && x >= kFioTarget;
    *text += fmt::format("io_uring {:.2f} x fio (target >= {}): {}\n", x, kFioTarget,
                         x >= kFioTarget ? "met" : "MISSED");
  }
  if (uring != nullptr && uring->compute) {
    const double r = uring->compute->ratio;
    ok = ok && r <= kOverlapTarget;
    *text += fmt::format("io_uring per-layer / max(I/O, compute) {:.3f} (target <= {}): "
                         "{}\n", r, kOverlapTarget, r <= kOverlapTarget ? "met" : "MISSED");
  }
  return ok;
}

// fio's sequential read of the file, once (none with --no-fio or without fio): appended to
// fio. 0, or the exit code of a failure.
int run_fio_once(const Args& a, uint64_t chunk, const char* when, std::vector<FioResult>& fio) {
  if (a.no_fio) return 0;
  auto f = run_fio(a.file, chunk, a.qd);
  if (!f) return fail(f.error().message, 1);
  if (!f->has_value()) return 0;
  fio.push_back(**f);
  if (!a.json) fmt::print("fio ({}): {:.3f} GB/s   {}\n", when, fio.back().gbps, fio.back().command);
  return 0;
}

// Each source read cold, between a fio run before and one after: the disk drifts, and the
// two bracket it. 0, or the exit code of a failure.
int cold_pass(const Args& a, const BenchConfig& cfg, uint64_t chunk, const std::vector<SourceKind>& sources,
              std::vector<SourceResult>& results, std::vector<FioResult>& fio) {
  if (run_fio_once(a, chunk, "before", fio) != 0) return 1;
  for (SourceKind k : sources) {
    auto cold = run_cold(cfg, k);
    if (!cold) return fail(fmt::format("{}: {}", source_name(k), cold.error().message), 1);
    results.push_back({k, cold.value(), std::nullopt});
    progress(a, fmt::format("cold {}: {:.3f} GB/s", source_name(k), cold->gbps()));
  }
  if (run_fio_once(a, chunk, "after", fio) != 0) return 1;
  return 0;
}

// What the passes measured, for the report.
struct Measured {
  std::vector<SourceResult> results;
  std::vector<FioResult> fio;
  double fio_gbps = 0;
  double compute_us = 0;  // per layer; 0: no compute pass
  bool identical = true;  // every source gave the same bytes (checked by the compute pass)
};

void report(const Args& a, uint64_t file_bytes, const Measured& m, bool targets_ok, const std::string& target_text) {
  if (a.json) {
    nlohmann::json j = to_json(a, file_bytes, m.results, m.fio, m.identical);
    j["fio_gbps"] = m.fio_gbps;
    j["compute_us"] = m.compute_us;
    j["targets_met"] = targets_ok;
    std::puts(j.dump(2).c_str());
    return;
  }
  print_cold(m.results, m.fio_gbps);
  if (m.compute_us > 0) print_compute(m.results, m.compute_us);
  fmt::print("\n{}bytes identical across sources: {}\n", target_text,
             m.compute_us > 0 ? (m.identical ? "yes" : "NO") : "not checked (no compute pass)");
}

int run(Args& a) {
  auto sources = parse_sources(a.sources);
  if (!sources) return fail(sources.error().message, 2);
  auto chunk = parse_size(a.chunk);
  if (!chunk) return fail(chunk.error().message, 2);
  if (chunk.value() == 0 || chunk.value() > kMaxChunk)
    return fail(fmt::format("--chunk {}: must be from 1 byte to {}", a.chunk, format_bytes(kMaxChunk)), 2);
  auto remove = prepare_file(a);
  if (!remove) return fail(remove.error().message, remove.error().code == -EINVAL ? 2 : 1);
  struct Cleanup {
    std::string path;
    bool on;
    ~Cleanup() { if (on) std::filesystem::remove(path); }
  } cleanup{a.file, remove.value()};
  auto st = read_safetensors(a.file);
  if (!st) return fail(st.error().message, 2);  // a file the tool cannot take: bad input
  if (st->tensors.empty()) return fail(fmt::format("{}: the file holds no tensors", a.file), 2);
  auto config = make_config(a, st.value(), chunk.value());
  if (!config) return fail(config.error().message, 2);
  BenchConfig cfg = std::move(*config);
  a.layers = cfg.layers.size();
  if (!a.json) {
    fmt::print("file {}: {} in {} layers of {}\n", a.file, format_bytes(st->file_bytes),
               cfg.layers.size(), format_bytes(cfg.layers[0].length));
  }
  Measured m;
  if (int rc = cold_pass(a, cfg, chunk.value(), sources.value(), m.results, m.fio); rc != 0) return rc;
  // The baseline is fio's better run: the disk (and the host cache behind it) drifts
  // during a run, and the stricter baseline keeps the ratio honest.
  for (const auto& f : m.fio) m.fio_gbps = std::max(m.fio_gbps, f.gbps);
  const SourceResult* uring = nullptr;
  for (const auto& r : m.results) if (r.source == SourceKind::kUring) uring = &r;
  m.compute_us = a.compute_us;
  if (m.compute_us < 0) {
    const SourceResult& ref = uring != nullptr ? *uring : m.results.front();
    m.compute_us = ref.cold.seconds * 1e6 / double(cfg.layers.size());
  }
  cfg.compute_us = m.compute_us;
  if (m.compute_us > 0)
    if (int rc = compute_pass(a, cfg, m.results, &m.identical); rc != 0) return rc;
  std::string target_text;
  const bool targets_ok = check_targets(uring, m.fio_gbps, &target_text);
  report(a, st->file_bytes, m, targets_ok, target_text);
  if (!m.identical) return 1;
  return a.check && !targets_ok ? 1 : 0;
}

}  // namespace
}  // namespace ork::io::tools

int main(int argc, char** argv) {
  ork::io::tools::Args args;
  const int rc = ork::io::tools::parse_args(argc, argv, args);
  if (rc >= 0) return rc;
  return ork::tools::run_main("ork_stream_bench", [&] { return ork::io::tools::run(args); });
}
