// The stream the reorderer works on: buffers and an in-order list of ops (Torq's
// StreamGraph; text format in docs/sched.md section 2). Pure data, no device.
//
// Torq's six node kinds map as follows: its Pure nodes (allocs, views) are the
// `buffer` declarations, emitted implicitly just before the first op that uses them;
// the other five are OpKind below. A start without a wait becomes a barrier (as in Torq's pass).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "driver/common/result.h"

namespace ork::sched {

enum class OpKind : uint8_t { load, store, start, wait, barrier };

struct Buffer {
  std::string name;
  int64_t bytes = 0;
  bool in_memory = true;  // false: "xram", outside the scheduled memory
  int line = 0;           // source line, 0 when built in code
};

// A byte range of one buffer: buf[offset : offset + length].
struct Access {
  int buffer = -1;
  int64_t offset = 0;
  int64_t length = 0;
};

// One op. Its accesses are not its own vectors but a run of the stream's one array
// (Stream::accesses: its reads, then its writes), and its fields are ordered without padding:
// at a million ops the per-op vectors and the 112-byte op were most of the fresh pages a
// process touched (docs/sched.md section 5). Read them through Stream::reads / writes; a
// stream built in code adds an op with its accesses through Stream::add.
struct Op {
  std::string name;  // a wait carries its program's name
  int64_t cycles = 0;
  uint32_t first_access = 0;  // index in Stream::accesses of its first read
  uint32_t read_count = 0;
  uint32_t write_count = 0;
  int partner = -1;  // start <-> wait op index; -1 when none
  int line = 0;
  OpKind kind = OpKind::barrier;
  bool unwaited_start = false;  // a "start" with no wait, scheduled as a barrier
};

struct Stream {
  int64_t memory_bytes = 0;
  int cores = 1;
  // How the chooser (chooser.h) is to treat this stream, when its writer says (text lines
  // `slots SIZE`, `policy NAME`): slot_align_bytes > 0 is the executor's memory, a slot per
  // buffer (slots.h) with the list's pool aligned to it; 0 is the pool (pool.h). `policy` is
  // the rule the writer chose with ("fifo", "critical-path", "best"); empty: the caller's.
  int64_t slot_align_bytes = 0;
  std::string policy;
  std::vector<Buffer> buffers;
  std::vector<Op> ops;
  std::vector<Access> accesses;  // every op's reads then writes, in op order (Op::first_access)

  std::span<const Access> reads(const Op& op) const { return {accesses.data() + op.first_access, op.read_count}; }
  std::span<const Access> writes(const Op& op) const {
    return {accesses.data() + op.first_access + op.read_count, op.write_count};
  }
  // Appends `op` with these accesses (its first_access and counts are set here); returns it.
  Op& add(Op op, std::span<const Access> reads, std::span<const Access> writes) {
    op.first_access = static_cast<uint32_t>(accesses.size());
    op.read_count = static_cast<uint32_t>(reads.size());
    op.write_count = static_cast<uint32_t>(writes.size());
    accesses.insert(accesses.end(), reads.begin(), reads.end());
    accesses.insert(accesses.end(), writes.begin(), writes.end());
    return ops.emplace_back(std::move(op));
  }
};

// Bounds on what a stream may declare, checked by finalize_stream. They keep every sum the
// simulator, the graph and the scheduler form within int64 (ops x cycles <= 2^20 x 2^40 =
// 2^60, plus one cycle per start and the swaps, each clamped to kMaxOpCycles) and keep the
// per-core and per-op tables a stream sizes (cores x ..., ops x ...) small. An RK3588 has
// 3 cores; 1024 leaves room for any NPU this format would describe.
inline constexpr int kMaxCores = 1024;
inline constexpr int64_t kMaxOps = int64_t{1} << 20;         // 1,048,576 ops
inline constexpr int64_t kMaxOpCycles = int64_t{1} << 40;    // ~18 minutes at 1 GHz
inline constexpr int64_t kMaxBytes = int64_t{1} << 48;       // memory and buffer sizes: 256 TiB
inline constexpr int64_t kMaxOpAccesses = int64_t{1} << 20;  // one op's reads and writes together

// "load L1", "start P1", "wait P1": how an op is named in orders and pictures.
std::string op_label(const Op& op);
// The same label appended to `out` (no string of its own: reports write a million of them).
void append_op_label(std::string& out, const Op& op);
const char* kind_name(OpKind kind);
// The kind an op is written with: "start" for an unwaited start (scheduled as a barrier).
const char* label_kind(const Op& op);

// Links starts and waits, turns unwaited starts into barriers and checks every rule
// that the text format states: unknown buffers, duplicate names, a wait without a start,
// ranges outside their buffer, missing reads/writes on DMA ops, memory/cores >= 1, a slot
// alignment that is 0 or a power of two up to memory, a policy that is empty or named, and
// the bounds above.
// Builders that make streams in code call it too. The parser, which has already refused
// duplicate buffer names as it read them, passes check_buffer_names = false.
Status finalize_stream(Stream& stream, bool check_buffer_names = true);

// finalize_stream's first checks: the memory, cores, slots and policy values, and `ops` and
// `accesses` within the bounds above. For a parser that counted ops it did not keep (past
// kMaxOps no stream is valid, parse.cpp).
Status check_stream_bounds(const Stream& stream, uint64_t ops, uint64_t accesses);

}  // namespace ork::sched
