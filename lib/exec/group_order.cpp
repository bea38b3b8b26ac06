// The groups of a layer in the executor's order (group_order.h).
#include "lib/exec/group_order.h"

namespace ork::exec {

GroupOrder::GroupOrder(const ModelDesc& desc) : groups_(batch_groups(desc)), of_(desc.matmuls.size(), 0) {
  for (size_t g = 0; g < groups_.size(); ++g)
    for (int j : groups_[g].matmuls) of_[static_cast<size_t>(j)] = static_cast<int>(g);
}

bool GroupOrder::follows(int la, int a, int lb, int b) const {
  const int ga = of_[static_cast<size_t>(a)], gb = of_[static_cast<size_t>(b)];
  if (lb == la) return gb == ga + 1;
  return lb == la + 1 && ga + 1 == static_cast<int>(groups_.size()) && gb == 0;
}

}  // namespace ork::exec
