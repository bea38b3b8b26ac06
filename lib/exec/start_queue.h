// The starts the executor's walk hands to its device thread (executor.cpp), in the order's
// order, and which of them the device thread takes as one job: a group of a layer's matmuls
// (batch_groups) once all of its starts are queued, else the front start alone.
//
// A fused group's starts (fusion.h) are queued together, at the first of them the order
// meets (starts_with), so the device thread always finds such a group whole and runs it as
// the one fused job the plan chose and the projection prices. Queued one by one, a member
// went alone whenever the walk waited for a program between its group's starts (the
// sequential order waits after every start), and then ran the whole fused matmul alone,
// once a member (docs/execution.md "Fused groups"). Queuing them early is safe: the members
// read one input and one buffer, whose every load precedes the first start
// (exec_plan.cpp loads_with); their waits stay where the order has them.
#pragma once

#include <deque>
#include <vector>

#include "lib/exec/exec_plan.h"
#include "lib/exec/group_order.h"

namespace ork::exec {

class StartQueue {
 public:
  StartQueue(const ExecPlan& plan, const ModelDesc& desc);
  // The walk's: the starts to queue at start op `op` of the order ({op}, or a fused group's
  // every start in its members' order); none when `op` was queued already.
  std::vector<int> starts_with(int op) const;
  void push(const std::vector<int>& ops);
  // The device thread's (the caller's lock held for these and push):
  bool empty() const { return queue_.empty(); }
  int front() const { return queue_.front(); }
  // The starts of `front`'s group (its token and layer) when it is the group's first and all
  // of them are queued; {front} when it goes alone (`groups` off, or not a group's first);
  // empty: wait for the rest.
  std::vector<int> group_queued(int front, bool groups) const;
  // Takes `ops` out of the queue.
  void remove(const std::vector<int>& ops);

 private:
  const ExecPlan& plan_;
  const GroupOrder order_;
  const size_t per_layer_;         // matmuls a layer
  std::deque<int> queue_;
  std::vector<bool> queued_;      // per op: handed to the device thread
  std::vector<size_t> position_;  // per op: its place in the order
};

}  // namespace ork::exec
