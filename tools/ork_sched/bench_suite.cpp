#include "tools/ork_sched/bench_suite.h"

#include <fmt/format.h>

#include <fstream>
#include <random>
#include <sstream>

#include "lib/exec/model.h"
#include "lib/exec/exec_plan.h"
#include "lib/exec/plan_text.h"

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
  add_example(out, dir, "example1.stream", 4);
  add_example(out, dir, "example2.stream", 1);
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

namespace {

// A packed 7B model's tensor table without a file: offsets and packed sizes only, which is
// all the plan reads.
exec::PackedModel seven_b_model() {
  exec::PackedModel m;
  m.desc = exec::synthetic_desc("7b", 28, matmul::DType::int8).value();
  uint64_t at = exec::kPackHeaderBytes;
  for (int l = 0; l < m.desc.layers; ++l)
    for (size_t j = 0; j < m.desc.matmuls.size(); ++j) {
      const exec::MatmulDesc& md = m.desc.matmuls[j];
      const uint64_t bytes = exec::packed_bytes(m.desc.dtype, md.k, md.n).value();
      m.tensors.push_back({l, static_cast<int>(j), at, bytes, 0, 0});
      at = exec::align_up(at + bytes, exec::kPackAlign);
    }
  m.file_bytes = at;
  return m;
}

exec::PlanOptions seven_b_options(int ops, exec::Order order) {
  exec::PlanOptions o;
  o.tokens = std::max(1, ops / (3 * 28 * 7));
  o.budget_bytes = uint64_t{1} << 30;
  o.order = order;
  return o;
}

Stream seven_b_stream(int ops) {
  const exec::PackedModel model = seven_b_model();
  // The stream only (sequential: no chooser): the bench schedules it itself.
  return exec::build_plan(model, seven_b_options(ops, exec::Order::sequential)).value().stream;
}

}  // namespace

Result<size_t> seven_b_plan_only(int ops) {
  const exec::PackedModel model = seven_b_model();
  const exec::PlanOptions o = seven_b_options(ops, exec::Order::scheduled);
  Result<exec::ExecPlan> plan = exec::build_plan(model, o);
  if (!plan) return plan.error();
  Result<std::string> text = exec::format_plan(*plan, o, "7b.ork");
  if (!text) return text.error();
  return text->size();
}

bool has_ranges(const Stream& s) {
  for (const Op& op : s.ops)
    for (const auto list : {s.reads(op), s.writes(op)})
      for (const Access& a : list)
        if (a.offset != 0 || a.length != s.buffers[a.buffer].bytes) return true;
  return false;
}

std::vector<BenchCase> heldout_suite(uint64_t seed, int count) {
  std::mt19937_64 rng(seed);
  auto draw = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  std::vector<BenchCase> out;
  for (int i = 0; i < count; ++i) {
    Stream s;
    std::string name;
    if (i % 4 == 3) {
      DecodeParams p;
      p.layers = static_cast<int>(draw(2, 4));
      p.tiles = static_cast<int>(draw(2, 8));
      p.memory_bytes = draw(6, 16) * (64 << 10);
      p.cores = static_cast<int>(draw(1, 3));
      p.compute_percent = static_cast<int>(draw(30, 220));
      s = make_transformer_decode(p);
      name = fmt::format("decode l{} t{} m{}K c{} x{}%", p.layers, p.tiles, p.memory_bytes >> 10, p.cores,
                         p.compute_percent);
    } else {
      RandomParams p;
      p.programs = static_cast<int>(draw(20, 60));
      p.cores = static_cast<int>(draw(1, 3));
      p.memory_bytes = draw(1, 8) * (64 << 10);
      p.max_outstanding = static_cast<int>(draw(1, 3));
      p.max_buffer_percent = static_cast<int>(draw(8, 35));
      const uint64_t stream_seed = rng();
      s = make_random_stream(stream_seed, p);
      name = fmt::format("random {:x}", stream_seed & 0xffffff);
    }
    if (!schedule(s, Options{})) continue;  // its input order cannot run
    out.push_back({i % 4 == 3 ? "decode" : "random", name, std::move(s), {}});
  }
  return out;
}

Stream scaling_stream(const std::string& kind, int ops) {
  if (kind == "7b") return seven_b_stream(ops);
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
