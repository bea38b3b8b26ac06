#include "lib/sched/stream.h"

#include <array>

#include "lib/sched/beside.h"
#include "lib/sched/names.h"

namespace ork::sched {

const char* kind_name(OpKind kind) {
  switch (kind) {
    case OpKind::load: return "load";
    case OpKind::store: return "store";
    case OpKind::start: return "start";
    case OpKind::wait: return "wait";
    case OpKind::barrier: return "barrier";
  }
  return "?";
}

const char* label_kind(const Op& op) { return op.unwaited_start ? "start" : kind_name(op.kind); }

void append_op_label(std::string& out, const Op& op) {
  out += label_kind(op);
  out += ' ';
  out += op.name;
}

std::string op_label(const Op& op) {
  std::string label;
  append_op_label(label, op);
  return label;
}

namespace {

// "line 7: " for parsed ops, "op 3 (load L1): " for ops built in code.
std::string where(const Op& op, size_t index) {
  if (op.line > 0) return "line " + std::to_string(op.line) + ": ";
  return "op " + std::to_string(index) + " (" + op_label(op) + "): ";
}

Status check_access(const Stream& s, const Op& op, size_t i, const Access& a) {
  if (a.buffer < 0 || a.buffer >= static_cast<int>(s.buffers.size()))
    return make_error(-EINVAL, where(op, i) + "access names no declared buffer");
  const Buffer& b = s.buffers[a.buffer];
  // Written so that no sum can overflow: offset + length is never formed.
  if (a.offset < 0 || a.length <= 0 || a.offset > b.bytes || a.length > b.bytes - a.offset)
    return make_error(-EINVAL, where(op, i) + "range [" + std::to_string(a.offset) + ":" +
                                   std::to_string(a.length) + "] lies outside buffer " + b.name +
                                   " of " + std::to_string(b.bytes) + " bytes");
  return {};
}

Status check_op_shape(const Stream& s, const Op& op, size_t i) {
  // Built in code, an op's run of accesses could lie past the array (Stream::add keeps it in).
  if (uint64_t{op.first_access} + op.read_count + op.write_count > s.accesses.size())
    return make_error(-EINVAL, where(op, i) + "its accesses lie past the stream's " + std::to_string(s.accesses.size()));
  // The graph numbers an op's accesses in 31 bits (graph.cpp, Touch); no op comes near this.
  if (int64_t{op.read_count} + op.write_count > kMaxOpAccesses)
    return make_error(-EINVAL, where(op, i) + std::to_string(int64_t{op.read_count} + op.write_count) +
                                   " reads and writes: at most " + std::to_string(kMaxOpAccesses) + " (2^20) an op");
  if (op.cycles < 0 || op.cycles > kMaxOpCycles)
    return make_error(-EINVAL, where(op, i) + "cycles " + std::to_string(op.cycles) + " must be from 0 to " +
                                   std::to_string(kMaxOpCycles) + " (2^40)");
  if (op.kind == OpKind::load && op.write_count == 0)
    return make_error(-EINVAL, where(op, i) + "a load needs writes=<buffer>");
  if (op.kind == OpKind::store && op.read_count == 0)
    return make_error(-EINVAL, where(op, i) + "a store needs reads=<buffer>");
  if (op.kind == OpKind::wait && (op.read_count != 0 || op.write_count != 0 || op.cycles != 0))
    return make_error(-EINVAL, where(op, i) + "a wait takes no reads/writes/cycles (its start has them)");
  return {};
}

// Pairs every wait with the start of the same name that precedes it. One table of the
// names of the ops before (waits excluded): a wait's name must be an earlier start's. The
// index slot of the op name kLookahead ops on starts loading now (NameTable::prefetch_hash;
// its hash is kept for the insert), so a million names' inserts do not wait for their cache
// misses one at a time; waits find their start in the table's recent entries and need none.
Status link_programs(Stream& s) {
  constexpr size_t kLookahead = 16;
  NameTable named(s.ops.size());
  std::array<uint64_t, kLookahead> hashes{};  // op i's name hash at i % kLookahead, taken ahead
  const auto look_ahead = [&](size_t i) {
    if (i >= s.ops.size() || s.ops[i].kind == OpKind::wait) return;
    hashes[i % kLookahead] = NameTable::hash(s.ops[i].name);
    named.prefetch_hash(hashes[i % kLookahead]);
  };
  for (size_t i = 0; i < kLookahead; ++i) look_ahead(i);
  for (size_t i = 0; i < s.ops.size(); ++i) {
    const uint64_t hash = hashes[i % kLookahead];  // read before op i + kLookahead takes the slot
    look_ahead(i + kLookahead);
    Op& op = s.ops[i];
    op.partner = -1;
    if (op.kind == OpKind::wait) {
      const int at = named.find(op.name);
      if (at < 0 || s.ops[at].kind != OpKind::start)
        return make_error(-EINVAL, where(op, i) + "wait " + op.name + " without a start before it");
      Op& start = s.ops[at];
      if (start.partner >= 0)
        return make_error(-EINVAL, where(op, i) + "second wait for program " + op.name);
      start.partner = static_cast<int>(i);
      op.partner = at;
      continue;
    }
    if (op.name.empty()) return make_error(-EINVAL, where(op, i) + "op has no name");
    if (named.insert(op.name, hash, static_cast<int>(i)) != static_cast<int>(i))
      return make_error(-EINVAL, where(op, i) + "duplicate op name " + op.name);
  }
  return {};
}

// Every op's shape and accesses, in op order (the first bad one).
Status check_ops(const Stream& s) {
  for (size_t i = 0; i < s.ops.size(); ++i) {
    const Op& op = s.ops[i];
    if (Status st = check_op_shape(s, op, i); !st) return st;
    for (const Access& a : s.reads(op))
      if (Status st = check_access(s, op, i, a); !st) return st;
    for (const Access& a : s.writes(op))
      if (Status st = check_access(s, op, i, a); !st) return st;
  }
  return {};
}

}  // namespace

Status check_stream_bounds(const Stream& s, uint64_t ops, uint64_t accesses) {
  if (s.memory_bytes <= 0 || s.memory_bytes > kMaxBytes)
    return make_error(-EINVAL, "memory " + std::to_string(s.memory_bytes) + " must be from 1 byte to " +
                                   std::to_string(kMaxBytes) + " bytes (256 TiB)");
  if (s.cores < 1 || s.cores > kMaxCores)
    return make_error(-EINVAL, "cores " + std::to_string(s.cores) + " must be from 1 to " + std::to_string(kMaxCores));
  if (s.slot_align_bytes < 0 || s.slot_align_bytes > s.memory_bytes ||
      (s.slot_align_bytes & (s.slot_align_bytes - 1)) != 0)
    return make_error(-EINVAL, "slots " + std::to_string(s.slot_align_bytes) +
                                   ": the slot alignment must be a power of two bytes, at most memory");
  if (!s.policy.empty() && s.policy != "fifo" && s.policy != "critical-path" && s.policy != "best")
    return make_error(-EINVAL, "policy '" + s.policy + "': expected fifo, critical-path or best");
  if (ops > static_cast<uint64_t>(kMaxOps))
    return make_error(-EINVAL, "the stream has " + std::to_string(ops) + " ops; at most " +
                                   std::to_string(kMaxOps) + " are allowed");
  if (accesses > UINT32_MAX)
    return make_error(-EINVAL, "the stream has " + std::to_string(accesses) + " accesses; at most 2^32 - 1");
  return {};
}

Status finalize_stream(Stream& s, bool check_buffer_names) {
  if (Status st = check_stream_bounds(s, s.ops.size(), s.accesses.size()); !st) return st;
  NameTable buffer_names(check_buffer_names ? s.buffers.size() : 0);
  for (size_t id = 0; id < s.buffers.size(); ++id) {
    const Buffer& b = s.buffers[id];
    if (b.bytes <= 0 || b.bytes > kMaxBytes)
      return make_error(-EINVAL, "buffer " + b.name + ": size " + std::to_string(b.bytes) + " must be from 1 byte to " +
                                     std::to_string(kMaxBytes) + " bytes (256 TiB)");
    if (check_buffer_names && buffer_names.insert(b.name, static_cast<int>(id)) != static_cast<int>(id))
      return make_error(-EINVAL, "duplicate buffer name " + b.name);
  }
  for (Op& op : s.ops) {  // finalize may run twice: undo a previous demotion first
    if (op.unwaited_start) op.kind = OpKind::start;
    op.unwaited_start = false;
  }
  // The ops' checks read what link_programs does not write (it sets Op::partner only): from
  // kBesideOps ops they run beside it (0.04-0.06 s of a 1M-op stream's finalize); a failed
  // check is reported before a link error, as when they ran one after the other.
  std::future<Status> linked = run_beside(static_cast<int>(s.ops.size()), [&s] { return link_programs(s); });
  const Status checked = check_ops(s);
  const Status link = linked.get();
  if (!checked) return checked;
  if (!link) return link;
  for (Op& op : s.ops) {
    if (op.kind == OpKind::start && op.partner < 0) {  // a start without a wait (docs/sched.md, section 2)
      op.kind = OpKind::barrier;
      op.unwaited_start = true;
    }
  }
  return {};
}

}  // namespace ork::sched
