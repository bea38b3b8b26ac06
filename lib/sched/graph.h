// Step 1 of Torq's PrefetchInputsPass (docs/sched.md): the dependency graph (StreamGraph),
// plus what the memory model needs: which buffers each op brings to life and which it releases.
//
// Edges (A -> B: A first), every one from an earlier to a later op of the input order:
//   program: start P -> wait P;
//   barrier: every op since the previous barrier -> barrier -> every op up to the next;
//   memory:  two accesses to overlapping bytes of one buffer, at least one a write
//            (read-after-write = Torq's def/use edge, write-after-read, write-after-
//            write), in memory and in xram. A program holds its buffers until its wait,
//            so an edge out of a program leaves from its wait.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "driver/common/result.h"
#include "lib/sched/stream.h"

namespace ork::sched {

// Lists per index in one flat array (CSR): list i is items[offsets[i] .. offsets[i+1]).
// One allocation for all of them instead of a vector per op (docs/sched.md "Speed").
struct FlatLists {
  std::vector<int> offsets{0};
  std::vector<int> items;

  std::span<const int> operator[](int i) const {
    return {items.data() + offsets[static_cast<size_t>(i)], items.data() + offsets[static_cast<size_t>(i) + 1]};
  }
  int size() const { return static_cast<int>(offsets.size()) - 1; }
};

// Per op, what the hot loops read: 16 bytes, where an Op is 112 with its name and access
// vectors, so listSchedule, the placer and simulateOrder stay in cache (docs/sched.md "Speed").
struct OpInfo {
  int64_t cycles = 0;
  int partner = -1;
  OpKind kind = OpKind::barrier;
};

struct Graph {
  int op_count = 0;
  std::vector<OpInfo> info;           // per op: kind, cycles, partner (copied from the stream)
  std::vector<int64_t> buffer_bytes;  // per buffer: its size (copied from the stream)
  std::vector<int> succ_offsets;  // CSR: successors of op i are succs[offsets[i] .. offsets[i+1])
  std::vector<int> succs;
  std::vector<int> pred_counts;

  // Memory model, over buffers with in_memory only. A buffer is born when the first op of
  // born_by that touches it is emitted (a program's buffers at its start) and dies when its
  // last releasing op is emitted (a program releases at its wait).
  FlatLists born_by;      // per op, sorted buffer ids
  FlatLists released_by;  // per op, sorted buffer ids
  FlatLists dirtied_by;   // per op: buffers it writes that are not loads' (the placer spills them)
  std::vector<int> release_count;  // per buffer: ops that release it
  FlatLists program_users;  // per buffer: start ops touching it, input order
  std::vector<int> first_consumer;  // per load: first start reading what it writes, or -1
  std::vector<int64_t> working_set;  // per op: bytes of born_by (a start's pinned set)
  std::vector<int> starts;           // start ops, input order

  std::span<const int> successors(int op) const {
    return {succs.data() + succ_offsets[op], succs.data() + succ_offsets[op + 1]};
  }
  size_t edge_count() const { return succs.size(); }
};

// Fails when the input order itself breaks a memory edge, e.g. an op that touches a
// buffer a started program still holds (its wait comes later): that stream races.
Result<Graph> build_graph(const Stream& stream);

// True when `order` is a permutation of the ops that keeps every edge.
bool order_respects_graph(const Graph& graph, std::span<const int> order);

}  // namespace ork::sched
