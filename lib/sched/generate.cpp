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
    s_.add(Op{.name = name, .cycles = cycles, .kind = kind}, reads, writes);
  }

 private:
  Stream& s_;
};

struct Output {
  int buffer;
  int64_t bytes;
};

// One random stream being built: the generator, the stream so far, and the outputs of the
// programs started (outstanding) and waited (ready) that later programs may read. The draws
// happen in one fixed order, so a seed names one stream.
class RandomStream {
 public:
  RandomStream(uint64_t seed, const RandomParams& p)
      : rng_(seed), p_(p), max_buffer_(std::max<int64_t>(64, p.memory_bytes * p.max_buffer_percent / 100)) {
    s_.memory_bytes = p.memory_bytes;
    s_.cores = p.cores;
  }

  Stream build() {
    for (int i = 0; i < p_.programs; ++i) program(std::to_string(i));
    while (!outstanding_.empty()) wait_oldest();
    (void)finalize_stream(s_);
    return std::move(s_);
  }

 private:
  int64_t uniform(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng_); }
  // An index among the last read_window entries: data flows between nearby programs, so
  // old outputs die and long streams stay within memory.
  int64_t recent(size_t size) {
    return uniform(std::max<int64_t>(0, static_cast<int64_t>(size) - p_.read_window), static_cast<int64_t>(size) - 1);
  }
  void wait_oldest() {
    b_.op(OpKind::wait, outstanding_.front().first, {}, {}, 0);
    ready_.push_back(outstanding_.front().second);
    outstanding_.pop_front();
  }

  // Program id: its weights loaded, some earlier outputs read, one output written; then
  // some waits, maybe a store and a barrier.
  void program(const std::string& id) {
    std::vector<Access> reads = load_weights(id);
    for (int r = 0, n = static_cast<int>(uniform(0, 2)); r < n && !ready_.empty(); ++r) {
      const Output& o = ready_[recent(ready_.size())];
      const int64_t off = uniform(0, o.bytes - 1);
      reads.push_back({o.buffer, off, uniform(1, o.bytes - off)});
    }
    const Output out = pick_output(id);
    b_.op(OpKind::start, "P" + id, reads, {b_.whole(out.buffer)}, uniform(1, 200));
    outstanding_.push_back({"P" + id, out});
    while (static_cast<int>(outstanding_.size()) > p_.max_outstanding ||
           (!outstanding_.empty() && uniform(0, 2) != 0))
      wait_oldest();
    if (!ready_.empty() && uniform(0, 3) == 0) {
      const Output o = ready_.back();
      ready_.pop_back();  // stored and retired: nobody writes it again
      const int x = b_.buffer("x" + id, o.bytes, false);
      b_.op(OpKind::store, "S" + id, {b_.whole(o.buffer)}, {b_.whole(x)}, uniform(1, 80));
    }
    if (uniform(0, 99) < p_.barrier_percent) b_.op(OpKind::barrier, "B" + id, {}, {}, uniform(0, 5));
  }

  // Zero to two weight buffers, each loaded whole or as two halves; returns their reads.
  std::vector<Access> load_weights(const std::string& id) {
    std::vector<Access> reads;
    for (int w = 0, n = static_cast<int>(uniform(0, 2)); w < n; ++w) {
      const int wb = b_.buffer("w" + id + "_" + std::to_string(w), uniform(64, max_buffer_));
      const int64_t bytes = s_.buffers[wb].bytes;
      if (uniform(0, 3) == 0 && bytes >= 128) {  // two loads fill the two halves
        b_.op(OpKind::load, "L" + id + "_" + std::to_string(w) + "a", {}, {{wb, 0, bytes / 2}}, uniform(1, 60));
        b_.op(OpKind::load, "L" + id + "_" + std::to_string(w) + "b", {}, {{wb, bytes / 2, bytes - bytes / 2}}, uniform(1, 60));
      } else {
        b_.op(OpKind::load, "L" + id + "_" + std::to_string(w), {}, {b_.whole(wb)}, uniform(1, 100));
      }
      reads.push_back(b_.whole(wb));
    }
    return reads;
  }

  // A new output buffer, or an earlier output updated in place (write-after-read/write
  // edges), the latter only when no running program may still read it.
  Output pick_output(const std::string& id) {
    if (outstanding_.empty() && !ready_.empty() && uniform(0, 4) == 0) {
      auto it = ready_.begin() + recent(ready_.size());
      const Output out = *it;
      ready_.erase(it);
      return out;
    }
    Output out{b_.buffer("o" + id, uniform(64, max_buffer_)), 0};
    out.bytes = s_.buffers[out.buffer].bytes;
    return out;
  }

  std::mt19937_64 rng_;
  const RandomParams& p_;
  const int64_t max_buffer_;
  Stream s_;
  Builder b_{s_};
  std::vector<Output> ready_;                               // outputs of waited programs
  std::deque<std::pair<std::string, Output>> outstanding_;  // started, not waited
};

}  // namespace

Stream make_random_stream(uint64_t seed, const RandomParams& p) { return RandomStream(seed, p).build(); }

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
