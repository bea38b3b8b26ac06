#include "lib/sched/bounds.h"

#include <algorithm>
#include <iterator>
#include <utility>
#include <vector>

namespace ork::sched {

namespace {

// Minimal delay from issuing `from` to issuing its successor `to` in any order.
int64_t latency(const Graph& g, int from, int to) {
  const OpInfo& op = g.info[from];
  if (op.kind == OpKind::wait) return 0;
  if (op.kind == OpKind::start) return op.partner == to ? op.cycles : 1;
  return op.cycles;
}

// Cycles the op holds the stream itself.
int64_t stream_cost(const OpInfo& op) {
  if (op.kind == OpKind::wait) return 0;
  return op.kind == OpKind::start ? 1 : op.cycles;
}

struct Job {
  int64_t head, body, tail;
};

// max over suffixes of jobs sorted by head of (k smallest heads + sum body + k * min tail) / k,
// and the same with heads and tails swapped. Valid for any subset (Carlier's bound).
int64_t head_body_tail(std::vector<Job> jobs, int k) {
  int64_t best = 0;
  for (int pass = 0; pass < 2; ++pass) {
    std::sort(jobs.begin(), jobs.end(), [](const Job& a, const Job& b) { return a.head < b.head; });
    int64_t body = 0, min_tail = INT64_MAX;
    for (size_t i = jobs.size(); i-- > 0;) {
      body += jobs[i].body;
      min_tail = std::min(min_tail, jobs[i].tail);
      if (jobs.size() - i < static_cast<size_t>(k)) continue;
      int64_t heads = 0;
      for (int j = 0; j < k; ++j) heads += jobs[i + j].head;
      best = std::max(best, (heads + body + k * min_tail + k - 1) / k);
    }
    for (Job& j : jobs) std::swap(j.head, j.tail);  // a reversed schedule is a schedule
  }
  return best;
}

int64_t shared_bytes(const Stream& s, std::span<const int> a, std::span<const int> b) {
  std::vector<int> both;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(both));
  int64_t bytes = 0;
  for (int id : both) bytes += s.buffers[id].bytes;
  return bytes;
}

// A greedy clique of programs that cannot run at the same time: each pair pins more
// bytes together than memory holds. Their compute is serial. Only the largest 256 pinned
// sets are looked at, so this stays cheap on 100k-op streams.
int64_t memory_bound(const Stream& s, const Graph& g) {
  // Sorted with the key beside the op: std::sort's moves depend only on the comparisons'
  // answers, which are the same, so the order (ties included) is the one an indirect sort
  // gives, without a cache miss per comparison.
  std::vector<std::pair<int64_t, int>> keyed;
  keyed.reserve(g.starts.size());
  for (int p : g.starts) keyed.emplace_back(g.working_set[p], p);
  std::sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  if (keyed.size() > 256) keyed.resize(256);
  std::vector<int> programs;
  for (const auto& [bytes, p] : keyed) programs.push_back(p);
  std::vector<int> clique;
  int64_t cycles = 0;
  for (int p : programs) {
    bool conflicts_all = true;
    for (int q : clique) {
      const int64_t together = g.working_set[p] + g.working_set[q] - shared_bytes(s, g.born_by[p], g.born_by[q]);
      if (together <= s.memory_bytes) {
        conflicts_all = false;
        break;
      }
    }
    if (!conflicts_all) continue;
    clique.push_back(p);
    cycles += s.ops[p].cycles;
  }
  return clique.size() >= 2 ? cycles : 0;
}

}  // namespace

Bounds lower_bound(const Stream& s, const Graph& g) {
  const int n = g.op_count;
  std::vector<int64_t> head(n, 0), rest(n, 0);  // rest: issue of the op -> end of stream
  for (int i = 0; i < n; ++i)
    for (int succ : g.successors(i)) head[succ] = std::max(head[succ], head[i] + latency(g, i, succ));
  for (int i = n - 1; i >= 0; --i) {
    rest[i] = stream_cost(g.info[i]);
    for (int succ : g.successors(i)) rest[i] = std::max(rest[i], latency(g, i, succ) + rest[succ]);
  }
  Bounds b;
  // Reserved at their most (every op, every start) and moved into head_body_tail: grown by
  // doubling and then copied, they were half of the bound's samples at 1M ops on glibc's default
  // settings, their fresh pages included (docs/sched.md section 5); capacity never written costs
  // no page.
  std::vector<Job> stream_jobs, core_jobs;
  stream_jobs.reserve(static_cast<size_t>(n));
  core_jobs.reserve(g.starts.size());
  int64_t compute = 0;
  for (int i = 0; i < n; ++i) {
    const OpInfo& op = g.info[i];
    b.critical_path = std::max(b.critical_path, head[i] + rest[i]);
    b.stream_load += stream_cost(op);
    if (stream_cost(op) > 0) stream_jobs.push_back({head[i], stream_cost(op), rest[i] - stream_cost(op)});
    if (op.kind == OpKind::start) {
      compute += op.cycles;
      core_jobs.push_back({head[i], op.cycles, rest[op.partner]});
    }
  }
  b.core_load = (compute + s.cores - 1) / s.cores;
  b.pipeline = std::max(head_body_tail(std::move(stream_jobs), 1), head_body_tail(std::move(core_jobs), s.cores));
  b.memory = memory_bound(s, g);
  b.value = std::max({b.critical_path, b.stream_load, b.core_load, b.pipeline, b.memory});
  return b;
}

}  // namespace ork::sched
