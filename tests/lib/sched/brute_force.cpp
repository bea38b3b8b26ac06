#include "tests/lib/sched/brute_force.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include "lib/sched/simulate.h"

namespace ork::sched::test {

namespace {

struct Search {
  const Stream& s;
  const Graph& g;
  std::vector<int> indegree;
  std::vector<int> order;
  int64_t best = INT64_MAX;

  void run() {
    if (order.size() == s.ops.size()) {
      best = std::min(best, simulate_order(s, g, order).makespan);
      return;
    }
    for (int op = 0; op < g.op_count; ++op) {
      if (indegree[op] != 0) continue;
      indegree[op] = -1;
      for (int succ : g.successors(op)) --indegree[succ];
      order.push_back(op);
      run();
      order.pop_back();
      for (int succ : g.successors(op)) ++indegree[succ];
      indegree[op] = 0;
    }
  }
};

}  // namespace

int64_t brute_force_makespan(const Stream& s, const Graph& g) {
  Search search{s, g, g.pred_counts, {}, INT64_MAX};
  search.run();
  return search.best;
}

int64_t johnson_makespan(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  std::vector<size_t> first, last;
  for (size_t i = 0; i < a.size(); ++i) (a[i] <= b[i] ? first : last).push_back(i);
  std::sort(first.begin(), first.end(), [&](size_t x, size_t y) { return a[x] < a[y]; });
  std::sort(last.begin(), last.end(), [&](size_t x, size_t y) { return b[x] > b[y]; });
  first.insert(first.end(), last.begin(), last.end());
  // The optimum is max over u of (sum of a up to u) + (sum of b from u on).
  int64_t best = 0;
  for (size_t u = 0; u < first.size(); ++u) {
    int64_t span = 0;
    for (size_t i = 0; i <= u; ++i) span += a[first[i]];
    for (size_t i = u; i < first.size(); ++i) span += b[first[i]];
    best = std::max(best, span);
  }
  return best;
}

}  // namespace ork::sched::test
