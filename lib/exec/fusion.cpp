// The groups the executor runs fused (fusion.h).
#include "lib/exec/fusion.h"

#include <map>
#include <tuple>

#include "lib/exec/activation.h"
#include "lib/exec/group_order.h"

namespace ork::exec {

Result<GroupPlan> executor_group_plan(matmul::DType dtype, int64_t m, std::span<const std::pair<int64_t, int64_t>> shapes,
                                      int cores, std::span<const int64_t> slice_k, bool fuse) {
  return plan_group(dtype, m, shapes, cores, {}, slice_k, fuse);
}

bool fusion_fits(matmul::DType dtype, int64_t m, std::span<const std::pair<int64_t, int64_t>> shapes,
                 std::span<const int64_t> slice_k, std::span<const uint64_t> bytes, uint64_t align) {
  // The fused matmul must exist at all (one K-slice, N-blocks outermost: fusable) before
  // its pieces are asked about; the projection's host measurement has no plan to ask.
  if (!fusable(dtype, m, shapes, slice_k)) return false;
  for (size_t i = 0; i + 1 < bytes.size(); ++i)
    if (bytes[i] % align != 0) return false;  // padding would part the members' weights
  int64_t n = 0;
  for (const auto& s : shapes) n += s.second;
  const std::pair<int64_t, int64_t> summed[] = {{shapes[0].first, n}};
  const int64_t width[] = {slice_k.empty() ? 0 : slice_k[0]};
  return row_pieces(dtype, m, shapes, slice_k) == 1 && row_pieces(dtype, m, summed, width) == 1;
}

std::vector<matmul::ColumnPart> member_columns(std::span<const int64_t> ns, int64_t rows,
                                               std::vector<std::vector<uint8_t>>& out, int keep) {
  out.resize(ns.size());
  std::vector<matmul::ColumnPart> parts;
  int64_t column = 0;
  for (size_t i = 0; i < ns.size(); ++i) {
    void* c = nullptr;
    if (keep < 0 || static_cast<size_t>(keep) == i) {
      out[i].resize(static_cast<size_t>(output_bytes(rows, ns[i])));
      c = out[i].data();
    }
    parts.push_back({column, ns[i], c});
    column += ns[i];
  }
  return parts;
}

namespace {

// Whether one layer's group (its members' shapes, int4 widths and packed bytes) runs fused.
Result<bool> group_fuses(matmul::DType dtype, int64_t m, int cores, uint64_t align,
                         const std::vector<std::pair<int64_t, int64_t>>& shapes, const std::vector<int64_t>& widths,
                         const std::vector<uint64_t>& bytes) {
  if (!fusion_fits(dtype, m, shapes, widths, bytes, align)) return false;
  auto plan = executor_group_plan(dtype, m, shapes, cores, widths, true);
  if (!plan) return plan.error();
  return plan->fused;
}

}  // namespace

Result<Fusion> find_fusion(const PackedModel& model, int64_t m, int cores, uint64_t align, bool fuse) {
  const ModelDesc& d = model.desc;
  const size_t per_layer = d.matmuls.size();
  Fusion f;
  f.first.assign(static_cast<size_t>(d.layers) * per_layer, -1);
  f.offset.assign(f.first.size(), 0);
  f.bytes.assign(f.first.size(), 0);
  if (!fuse) return f;
  const GroupOrder order(d);
  std::map<std::tuple<std::vector<std::pair<int64_t, int64_t>>, std::vector<int64_t>, std::vector<uint64_t>>, bool> known;
  for (int l = 0; l < d.layers; ++l)
    for (size_t j = 0; j < per_layer; ++j) {
      const std::vector<int>& members = order.members(static_cast<int>(j));
      if (members.size() < 2 || members.front() != static_cast<int>(j)) continue;
      std::vector<std::pair<int64_t, int64_t>> shapes;
      std::vector<int64_t> widths;
      std::vector<uint64_t> bytes;
      for (int mm : members) {
        const MatmulDesc& md = d.matmuls[static_cast<size_t>(mm)];
        shapes.emplace_back(md.k, md.n);
        widths.push_back(model.tensor(l, mm).slice_k);
        bytes.push_back(model.tensor(l, mm).bytes);
      }
      auto key = std::make_tuple(shapes, widths, bytes);
      if (!known.count(key)) {
        auto yes = group_fuses(d.dtype, m, cores, align, shapes, widths, bytes);
        if (!yes) return yes.error();
        known[key] = *yes;
      }
      if (!known[key]) continue;
      uint64_t at = 0;
      for (int mm : members) {
        const size_t t = static_cast<size_t>(l) * per_layer + static_cast<size_t>(mm);
        f.first[t] = members.front();
        f.offset[t] = at;
        at += align_up(model.tensor(l, mm).bytes, align);
      }
      for (int mm : members) f.bytes[static_cast<size_t>(l) * per_layer + static_cast<size_t>(mm)] = at;
    }
  return f;
}

}  // namespace ork::exec
