// The executor's queue of starts (start_queue.h).
#include "lib/exec/start_queue.h"

#include <algorithm>

namespace ork::exec {

StartQueue::StartQueue(const ExecPlan& plan, const ModelDesc& desc)
    : plan_(plan), order_(desc), per_layer_(desc.matmuls.size()), queued_(plan.stream.ops.size(), false),
      position_(plan.stream.ops.size(), 0) {
  for (size_t i = 0; i < plan.order.size(); ++i) position_[static_cast<size_t>(plan.order[i])] = i;
}

std::vector<int> StartQueue::starts_with(int op) const {
  if (queued_[static_cast<size_t>(op)]) return {};
  const Step& s = plan_.op_steps[static_cast<size_t>(op)];
  if (!plan_.fusion.fused(static_cast<size_t>(s.layer) * per_layer_ + static_cast<size_t>(s.matmul))) return {op};
  const std::vector<int>& members = order_.members(s.matmul);
  std::vector<int> ops(members.size(), -1);
  size_t found = 0;  // the others come later in the order, a few ops on
  for (size_t i = position_[static_cast<size_t>(op)]; i < plan_.order.size() && found < ops.size(); ++i) {
    const Step& o = plan_.op_steps[static_cast<size_t>(plan_.order[i])];
    if (o.kind != Step::compute || o.token != s.token || o.layer != s.layer) continue;
    const auto at = std::find(members.begin(), members.end(), o.matmul);
    if (at != members.end()) ops[static_cast<size_t>(at - members.begin())] = plan_.order[i], ++found;
  }
  return ops;
}

void StartQueue::push(const std::vector<int>& ops) {
  for (int op : ops) queue_.push_back(op), queued_[static_cast<size_t>(op)] = true;
}

std::vector<int> StartQueue::group_queued(int front, bool groups) const {
  const Step& f = plan_.op_steps[static_cast<size_t>(front)];
  const std::vector<int>& members = order_.members(f.matmul);
  if (!groups || members.front() != f.matmul) return {front};
  std::vector<int> ops;
  for (int mm : members)
    for (int op : queue_) {
      const Step& s = plan_.op_steps[static_cast<size_t>(op)];
      if (s.kind == Step::compute && s.token == f.token && s.layer == f.layer && s.matmul == mm) {
        ops.push_back(op);
        break;
      }
    }
  return ops.size() == members.size() ? ops : std::vector<int>{};
}

void StartQueue::remove(const std::vector<int>& ops) {
  for (int op : ops) queue_.erase(std::find(queue_.begin(), queue_.end(), op));
}

}  // namespace ork::exec
