#include "lib/quant/group_plan.h"

#include <fmt/format.h>

namespace ork::quant {

Result<matmul::Plan> group_plan(int64_t m, int64_t k, int64_t n, int64_t group_width, int cores,
                                matmul::DType dtype) {
  if (group_width < matmul::kKAlign || group_width % matmul::kKAlign != 0 || group_width > matmul::kMaxFullK)
    return make_error(-EINVAL, fmt::format("group width {}: must be a multiple of {} up to {}", group_width,
                                           matmul::kKAlign, matmul::kMaxFullK));
  auto base = matmul::make_plan(matmul::Shape{m, group_width, n},
                                matmul::PlanOptions{.dtype = dtype, .cores = cores, .mc_cap = 0});
  if (!base) return base.error();
  if (base->slices != 1)
    return make_error(-EINVAL, fmt::format("group width {}: wider than one {} task", group_width, matmul::dtype_name(dtype)));
  matmul::Plan p = *base;
  const int64_t groups = (k + group_width - 1) / group_width;
  const int64_t tail_kt = (k - (groups - 1) * group_width + matmul::kKAlign - 1) / matmul::kKAlign * matmul::kKAlign;
  p.shape = matmul::Shape{m, k, n};
  p.kp = (groups - 1) * group_width + tail_kt;
  p.slice_k = group_width;
  p.slices = groups;
  p.tasks.clear();
  // Tasks stay grouped by core (the context keeps each core's order): per core, slice by slice.
  for (int core = 0; core < base->cores_used; ++core)
    for (int64_t s = 0; s < groups; ++s)
      for (matmul::Task t : base->tasks) {
        if (t.core != core) continue;
        t.k0 = s * group_width;
        t.kt = s + 1 < groups ? group_width : tail_kt;  // a shorter tail: its banks still fit
        t.slice = s;
        p.tasks.push_back(t);
      }
  return p;
}

}  // namespace ork::quant
