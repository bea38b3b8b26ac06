#include "lib/sched/generate.h"

#include <algorithm>
#include <deque>
#include <random>
#include <string>

namespace ork::sched {

namespace {

class Builder {
 public:
  explicit Builder(Stream& s) : s_(s) {}
  int buffer(const std::string& name, int64_t bytes, bool in_memory = true) {
    s_.buffers.push_back({name, bytes, in_memory, 0});
    return static_cast<int>(s_.buffers.size()) - 1;
  }
  Access whole(int b) const { return {b, 0, s_.buffers[b].bytes}; }
  void op(OpKind kind, const std::string& name, std::vector<Access> reads,
          std::vector<Access> writes, int64_t cycles) {
    s_.ops.push_back({kind, name, std::move(reads), std::move(writes), cycles, -1, false, 0});
  }

 private:
  Stream& s_;
};

struct Output {
  int buffer;
  int64_t bytes;
};

}  // namespace

Stream make_random_stream(uint64_t seed, const RandomParams& p) {
  std::mt19937_64 rng(seed);
  auto uniform = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  // An index among the last read_window entries: data flows between nearby programs, so
  // old outputs die and long streams stay within memory.
  auto recent = [&](size_t size) {
    return uniform(std::max<int64_t>(0, static_cast<int64_t>(size) - p.read_window), static_cast<int64_t>(size) - 1);
  };
  Stream s;
  s.memory_bytes = p.memory_bytes;
  s.cores = p.cores;
  Builder b(s);
  const int64_t max_buffer = std::max<int64_t>(64, p.memory_bytes * p.max_buffer_percent / 100);
  std::vector<Output> ready;            // outputs of waited programs
  std::deque<std::pair<std::string, Output>> outstanding;  // started, not waited
  auto wait_oldest = [&] {
    b.op(OpKind::wait, outstanding.front().first, {}, {}, 0);
    ready.push_back(outstanding.front().second);
    outstanding.pop_front();
  };
  for (int i = 0; i < p.programs; ++i) {
    const std::string id = std::to_string(i);
    std::vector<Access> reads;
    for (int w = 0, n = static_cast<int>(uniform(0, 2)); w < n; ++w) {
      const int wb = b.buffer("w" + id + "_" + std::to_string(w), uniform(64, max_buffer));
      const int64_t bytes = s.buffers[wb].bytes;
      if (uniform(0, 3) == 0 && bytes >= 128) {  // two loads fill the two halves
        b.op(OpKind::load, "L" + id + "_" + std::to_string(w) + "a", {}, {{wb, 0, bytes / 2}}, uniform(1, 60));
        b.op(OpKind::load, "L" + id + "_" + std::to_string(w) + "b", {}, {{wb, bytes / 2, bytes - bytes / 2}}, uniform(1, 60));
      } else {
        b.op(OpKind::load, "L" + id + "_" + std::to_string(w), {}, {b.whole(wb)}, uniform(1, 100));
      }
      reads.push_back(b.whole(wb));
    }
    for (int r = 0, n = static_cast<int>(uniform(0, 2)); r < n && !ready.empty(); ++r) {
      const Output& o = ready[recent(ready.size())];
      const int64_t off = uniform(0, o.bytes - 1);
      reads.push_back({o.buffer, off, uniform(1, o.bytes - off)});
    }
    std::vector<Access> writes;
    Output out{-1, 0};
    // Update an earlier output in place (write-after-read/write edges), only when no running
    // program may still read it.
    if (outstanding.empty() && !ready.empty() && uniform(0, 4) == 0) {
      auto it = ready.begin() + recent(ready.size());
      out = *it;
      ready.erase(it);
    } else {
      out = {b.buffer("o" + id, uniform(64, max_buffer)), 0};
      out.bytes = s.buffers[out.buffer].bytes;
    }
    writes.push_back(b.whole(out.buffer));
    b.op(OpKind::start, "P" + id, reads, writes, uniform(1, 200));
    outstanding.push_back({"P" + id, out});
    while (static_cast<int>(outstanding.size()) > p.max_outstanding ||
           (!outstanding.empty() && uniform(0, 2) != 0))
      wait_oldest();
    if (!ready.empty() && uniform(0, 3) == 0) {
      const Output o = ready.back();
      ready.pop_back();  // stored and retired: nobody writes it again
      const int x = b.buffer("x" + id, o.bytes, false);
      b.op(OpKind::store, "S" + id, {b.whole(o.buffer)}, {b.whole(x)}, uniform(1, 80));
    }
    if (uniform(0, 99) < p.barrier_percent) b.op(OpKind::barrier, "B" + id, {}, {}, uniform(0, 5));
  }
  while (!outstanding.empty()) wait_oldest();
  (void)finalize_stream(s);
  return s;
}

Stream make_transformer_decode(const DecodeParams& p) {
  Stream s;
  s.memory_bytes = p.memory_bytes;
  s.cores = p.cores;
  Builder b(s);
  int act = b.buffer("act0", p.activation_bytes);
  for (int l = 0; l < p.layers; ++l) {
    for (int m = 0; m < p.matmuls; ++m) {
      const std::string id = std::to_string(l) + "_" + std::to_string(m);
      // Matmuls differ: the MLP ones (m >= 4) are larger, and k/v (1, 2) smaller.
      const int64_t scale = !p.vary ? 4 : (m >= 4 ? 6 : (m == 1 || m == 2 ? 2 : 4));
      const int64_t tile = p.tile_bytes * scale / 4;
      const int64_t load_cycles = tile / p.bytes_per_cycle;
      const int next = b.buffer("act" + id, p.activation_bytes);
      const int64_t slice = p.activation_bytes / p.tiles;
      for (int t = 0; t < p.tiles; ++t) {
        const std::string tid = id + "_" + std::to_string(t);
        const int w = b.buffer("w" + tid, tile);
        b.op(OpKind::load, "L" + tid, {}, {b.whole(w)}, load_cycles);
        const int64_t off = slice * t;
        const int64_t len = t + 1 == p.tiles ? p.activation_bytes - off : slice;
        const int64_t compute = load_cycles * (p.vary ? p.compute_percent - 15 + 10 * (t % 4) : p.compute_percent) / 100;
        b.op(OpKind::start, "P" + tid, {b.whole(w), b.whole(act)}, {{next, off, len}}, std::max<int64_t>(1, compute));
        b.op(OpKind::wait, "P" + tid, {}, {}, 0);
      }
      act = next;
    }
    const int out = b.buffer("out" + std::to_string(l), p.activation_bytes, false);
    b.op(OpKind::store, "S" + std::to_string(l), {b.whole(act)}, {b.whole(out)},
         std::max<int64_t>(1, p.activation_bytes / p.bytes_per_cycle));
  }
  (void)finalize_stream(s);
  return s;
}

Stream make_tiles(const std::vector<int64_t>& a, const std::vector<int64_t>& c, int cores,
                  int64_t memory_bytes) {
  Stream s;
  s.memory_bytes = memory_bytes;
  s.cores = cores;
  Builder b(s);
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string id = std::to_string(i + 1);
    const int w = b.buffer("w" + id, 1024);
    b.op(OpKind::load, "L" + id, {}, {b.whole(w)}, a[i]);
    b.op(OpKind::start, "P" + id, {b.whole(w)}, {}, c[i]);
    b.op(OpKind::wait, "P" + id, {}, {}, 0);
  }
  (void)finalize_stream(s);
  return s;
}

}  // namespace ork::sched
