// Cross-cutting; exercises lib/sched/chooser.cpp and placement.cpp on generate.cpp's streams.
// Pins the schedules of a few generated 10k-op streams by a hash of everything schedule()
// returns (order, cores, pass, makespans, swaps, bounds, every attempt) and of the committed
// order's pool offsets. The digests were computed before the speed work of docs/sched.md
// "Speed at 1M ops" (second round), so a change that makes the scheduler faster but changes
// a result fails here. A deliberate change of the rules updates the digests and says why.
// The random DAGs' digests changed once, with rule 2's barrier check (docs/sched.md "Programs
// across a barrier"): loose 198,945 -> 197,843 cycles (fifo and critical-path), tight 268,180
// -> 271,990 (pass 1, 362 -> 485 swaps); the decode streams have no barrier and kept theirs.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "lib/sched/generate.h"
#include "lib/sched/parse.h"
#include "lib/sched/placement.h"
#include "lib/sched/chooser.h"

namespace ork::sched {
namespace {

// FNV-1a over 64-bit words: order-sensitive, and a changed field changes the digest.
struct Digest {
  uint64_t h = 14695981039346656037ull;
  void add(int64_t v) {
    for (int i = 0; i < 8; ++i) {
      h ^= static_cast<uint64_t>(v >> (8 * i)) & 0xff;
      h *= 1099511628211ull;
    }
  }
};

uint64_t digest(const Stream& s, const Schedule& r) {
  Digest d;
  for (int op : r.order) d.add(op);
  for (int core : r.core_of) d.add(core);
  for (int64_t v : {int64_t(r.pass), int64_t(r.policy), int64_t(r.dma_lookahead), int64_t(r.prefetch_percent),
                    int64_t(r.cap_percent), r.makespan_input, r.makespan_input_priced, r.makespan, r.peak_bytes,
                    r.swap_bytes})
    d.add(v);
  for (const SwapDma& w : r.swaps)
    for (int64_t v : {int64_t(w.position), int64_t(w.spill), int64_t(w.buffer), w.bytes, w.cycles}) d.add(v);
  const Bounds& b = r.bounds;
  for (int64_t v : {b.critical_path, b.stream_load, b.core_load, b.pipeline, b.memory, b.value}) d.add(v);
  for (const Attempt& a : r.attempts)
    for (int64_t v : {int64_t(a.pass), int64_t(a.policy), int64_t(a.dma_lookahead), int64_t(a.prefetch_percent),
                      int64_t(a.cap_percent), a.predicted, int64_t(a.placed), a.priced, int64_t(a.swaps)})
      d.add(v);
  PoolConfig memory;
  memory.capacity_bytes = s.memory_bytes;
  Result<Placement> p = place_order(s, build_graph(s).value(), r.order, memory, true, load_bandwidth(s));
  EXPECT_TRUE(static_cast<bool>(p));
  if (p) {
    for (int64_t off : p->offset) d.add(off);
    d.add(p->peak_used_bytes);
  }
  return d.h;
}

// About 10k ops: the speed runs' random DAG (ork_sched_bench's scaling_stream) ...
Stream random_loose() {
  RandomParams p;
  p.programs = 2857;
  p.memory_bytes = 1 << 20;
  p.max_buffer_percent = 4;
  p.max_outstanding = 2;
  return make_random_stream(42, p);
}

// ... one where memory is tight (buffers up to 10 % of 256 KiB: pass 1, ~360 swaps) ...
Stream random_tight() {
  RandomParams p;
  p.programs = 2857;
  p.memory_bytes = 256 << 10;
  p.max_buffer_percent = 10;
  p.max_outstanding = 2;
  p.cores = 3;
  return make_random_stream(7, p);
}

// ... and transformer decode (117 layers of 85 ops).
Stream decode() {
  DecodeParams p;
  p.layers = 117;
  return make_transformer_decode(p);
}

struct Pin {
  const char* name;
  Stream (*make)();
  Policy policy;
  uint64_t expected;
};

TEST(Pinned, TenThousandOpSchedulesAreUnchanged) {
  const Pin pins[] = {
      {"random loose fifo", random_loose, Policy::fifo, 0xadfca52e3a5abf02ull},
      {"random loose critical-path", random_loose, Policy::critical_path, 0x9bdfcc7fdf63216eull},
      {"random tight fifo", random_tight, Policy::fifo, 0x3a551732ff0d9b1eull},
      {"random tight best", random_tight, Policy::best, 0x9fabd3815dbd62e3ull},
      {"decode fifo", decode, Policy::fifo, 0xec6caf9268c1ecbdull},
      {"decode best", decode, Policy::best, 0xe3ef0c87bcf48739ull},
  };
  for (const Pin& pin : pins) {
    SCOPED_TRACE(pin.name);
    const Stream s = pin.make();
    ASSERT_GE(s.ops.size(), 9900u);
    Options o;
    o.policy = pin.policy;
    Result<Schedule> r = schedule(s, o);
    ASSERT_TRUE(static_cast<bool>(r)) << r.error().message;
    const uint64_t got = digest(s, *r);
    EXPECT_EQ(got, pin.expected) << pin.name << ": digest 0x" << std::hex << got << " (pass " << pass_name(r->pass)
                                 << ", makespan " << std::dec << r->makespan << ")";
  }
}

// The speed runs' streams at 100k ops (ork_sched_bench's scaling_stream: decode of 1,176
// layers, the random DAG of 28,571 programs), pinned the same way and also through the text
// format (format_stream, parse_stream: what the ork_sched process schedules). Digests taken
// before the speed work of docs/sched.md "Speed at 1M ops" (fifth round): the parser, the graph
// and the process got faster; not one result may move.
TEST(Pinned, HundredThousandOpSchedulesAreUnchangedAlsoThroughTheText) {
  DecodeParams dp;
  dp.layers = 100000 / (3 * dp.matmuls * dp.tiles + 1);
  RandomParams rp;
  rp.programs = 100000 * 10 / 35;
  rp.memory_bytes = 1 << 20;
  rp.max_buffer_percent = 4;
  rp.max_outstanding = 2;
  const struct {
    const char* name;
    Stream stream;
    uint64_t expected;
  } pins[] = {{"decode 100k", make_transformer_decode(dp), 0x58a2e74d6e372c57ull},
              {"random 100k", make_random_stream(42, rp), 0xb10cd9b586d2ea14ull}};
  for (const auto& pin : pins) {
    SCOPED_TRACE(pin.name);
    ASSERT_GE(pin.stream.ops.size(), 99000u);
    Result<Stream> parsed = parse_stream(format_stream(pin.stream));
    ASSERT_TRUE(static_cast<bool>(parsed)) << parsed.error().message;
    for (const Stream* s : {&pin.stream, static_cast<const Stream*>(&*parsed)}) {
      Result<Schedule> r = schedule(*s, Options{});
      ASSERT_TRUE(static_cast<bool>(r)) << r.error().message;
      const uint64_t got = digest(*s, *r);
      EXPECT_EQ(got, pin.expected) << pin.name << (s == &pin.stream ? "" : " (parsed)") << ": digest 0x" << std::hex
                                   << got << " (pass " << pass_name(r->pass) << ", makespan " << std::dec
                                   << r->makespan << ")";
    }
  }
}

}  // namespace
}  // namespace ork::sched
