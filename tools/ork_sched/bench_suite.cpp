#include "tools/ork_sched/bench_suite.h"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "lib/sched/generate.h"
#include "lib/sched/parse.h"

namespace ork::sched {

namespace {

void add_example(std::vector<BenchCase>& out, const std::string& dir, const std::string& file,
                 int urgent_starts) {
  std::ifstream in(dir + "/" + file);
  if (!in) return;
  std::stringstream text;
  text << in.rdbuf();
  Result<Stream> s = parse_stream(text.str());
  if (!s) return;
  Options o;
  o.urgent_starts = urgent_starts;
  out.push_back({"seed", file, std::move(*s), o});
}

}  // namespace

std::vector<BenchCase> bench_suite(const std::string& dir, int random_count) {
  std::vector<BenchCase> out;
  add_example(out, dir, "seed_example1.stream", 4);
  add_example(out, dir, "seed_example2.stream", 1);
  add_example(out, dir, "transformer_decode.stream", 4);
  struct Decode { int tiles; int64_t memory_k; int cores; int compute; };
  // Memory-bound decode (compute 40-60 % of the weight DMA) and compute-heavier variants.
  for (const Decode& d : {Decode{4, 512, 2, 60}, Decode{8, 512, 2, 60}, Decode{4, 1024, 2, 40},
                          Decode{4, 512, 3, 120}, Decode{8, 768, 1, 90}, Decode{4, 384, 2, 200}}) {
    DecodeParams p;
    p.tiles = d.tiles;
    p.memory_bytes = d.memory_k << 10;
    p.cores = d.cores;
    p.compute_percent = d.compute;
    out.push_back({"decode", fmt::format("decode t{} m{}K c{} x{}%", d.tiles, d.memory_k, d.cores, d.compute),
                   make_transformer_decode(p), {}});
  }
  for (int i = 0; i < random_count; ++i) {
    RandomParams p;
    p.programs = 20 + i % 20;
    p.cores = 1 + i % 3;
    p.memory_bytes = int64_t{64 + 64 * (i % 4)} << 10;
    p.max_outstanding = 1 + i % 3;
    out.push_back({"random", fmt::format("random {}", i), make_random_stream(1000 + i, p), {}});
  }
  return out;
}

Stream scaling_stream(const std::string& kind, int ops) {
  if (kind == "decode") {
    DecodeParams p;  // 3 ops per tile, 28 tiles and a store per layer
    p.layers = std::max(1, ops / (3 * p.matmuls * p.tiles + 1));
    return make_transformer_decode(p);
  }
  RandomParams p;  // about 3.5 ops per program (measured on the generator)
  p.programs = std::max(1, ops * 10 / 35);
  p.memory_bytes = 1 << 20;   // buffers up to 4 % of it: the input order always places
  p.max_buffer_percent = 4;
  p.max_outstanding = 2;
  return make_random_stream(42, p);
}

}  // namespace ork::sched
