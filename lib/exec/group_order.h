// The groups of a layer's matmuls in the executor's order (batch_groups, project.h): which
// group a matmul is in, and which group comes right after which in a step, the order in
// which the executor pipelines groups run in row pieces (docs/execution.md "Host and device
// overlapped").
#pragma once

#include <vector>

#include "lib/exec/model.h"
#include "lib/exec/project.h"

namespace ork::exec {

class GroupOrder {
 public:
  explicit GroupOrder(const ModelDesc& desc);
  // Its group's matmuls, in order.
  const std::vector<int>& members(int matmul) const { return groups_[static_cast<size_t>(of_[static_cast<size_t>(matmul)])].matmuls; }
  // Whether matmul b's group (at layer lb) comes right after matmul a's (at layer la) in a
  // step: the layer's next group, or after the layer's last group the next layer's first.
  bool follows(int la, int a, int lb, int b) const;

 private:
  std::vector<BatchGroup> groups_;
  std::vector<int> of_;  // per matmul: its group
};

}  // namespace ork::exec
