// The groups the executor runs fused (fusion.h).
#include "lib/exec/fusion.h"

#include <algorithm>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "lib/exec/activation.h"
#include "lib/exec/group_order.h"

namespace ork::exec {

Result<GroupPlan> executor_group_plan(matmul::DType dtype, int64_t m, std::span<const std::pair<int64_t, int64_t>> shapes,
                                      int cores, std::span<const int64_t> slice_k, bool fuse) {
  return plan_group(dtype, m, shapes, cores, {}, slice_k, fuse);
}

Result<std::vector<std::vector<FusedPiece>>> fused_pieces(matmul::DType dtype, int64_t k, std::span<const int64_t> ns,
                                                          int64_t width) {
  if (ns.empty()) return make_error(-EINVAL, "a fused group of no members");
  std::vector<matmul::Plan> layouts;
  for (int64_t n : ns) {
    auto layout = layout_plan(dtype, k, n, width);
    if (!layout) return layout.error();
    const matmul::Plan& first = layouts.empty() ? *layout : layouts.front();
    if (layout->np != n || layout->slices != first.slices || layout->slice_k != first.slice_k || layout->kp != first.kp)
      return make_error(-EINVAL, fmt::format("K = {}, N = {}: its native weights are not a fused group's member", k, n));
    layouts.push_back(std::move(*layout));
  }
  const int64_t bits = matmul::element_bits(dtype);
  std::vector<std::vector<FusedPiece>> out(ns.size());
  uint64_t at = 0;
  for (int64_t s = 0; s < layouts.front().slices; ++s) {
    const matmul::Plan& l = layouts.front();
    const int64_t depth = std::min(l.slice_k, l.kp - s * l.slice_k);  // the slice's K (kt_s)
    for (size_t j = 0; j < ns.size(); ++j) {
      const auto bytes = static_cast<uint64_t>(ns[j] * depth * bits / 8);
      const uint64_t from = out[j].empty() ? 0 : out[j].back().from + out[j].back().bytes;
      out[j].push_back({from, bytes, at});
      at += bytes;
    }
  }
  return out;
}

std::vector<FusedPiece> Fusion::reads(size_t tensor, uint64_t bytes) const {
  if (fused(tensor)) return pieces[tensor];
  return {{0, bytes, 0}};
}

std::span<const uint8_t> Fusion::tensor_bytes(size_t tensor, std::span<const std::byte> buffer, uint64_t bytes,
                                              std::vector<uint8_t>& gathered) const {
  const auto* base = reinterpret_cast<const uint8_t*>(buffer.data());
  const std::vector<FusedPiece> where = reads(tensor, bytes);
  if (where.size() == 1) return {base + where[0].at, bytes};
  gathered.resize(bytes);
  for (const FusedPiece& p : where) std::copy_n(base + p.at, p.bytes, gathered.data() + p.from);
  return gathered;
}

bool fusion_fits(matmul::DType dtype, int64_t m, std::span<const std::pair<int64_t, int64_t>> shapes,
                 std::span<const int64_t> slice_k, std::span<const uint64_t> bytes, uint64_t align) {
  // The fused matmul must exist at all (one K and width, N-blocks outermost: fusable) before
  // its pieces are asked about; the projection's host measurement has no plan to ask.
  if (!fusable(dtype, m, shapes, slice_k) || bytes.size() != shapes.size()) return false;
  std::vector<int64_t> ns;
  for (const auto& s : shapes) ns.push_back(s.second);
  const int64_t width = slice_k.empty() ? 0 : slice_k[0];
  auto pieces = fused_pieces(dtype, shapes[0].first, ns, width);
  if (!pieces) return false;
  uint64_t total = 0;
  for (size_t j = 0; j < pieces->size(); ++j) {
    uint64_t own = 0;
    for (const FusedPiece& p : (*pieces)[j]) {
      own += p.bytes;
      total = std::max(total, p.at + p.bytes);
    }
    if (own != bytes[j]) return false;  // not the layout fused_pieces describes
  }
  for (const auto& member : *pieces)
    for (const FusedPiece& p : member)
      if (p.at + p.bytes != total && (p.bytes % align != 0 || p.at % align != 0)) return false;  // padding would part them
  int64_t n = 0;
  for (int64_t v : ns) n += v;
  // The same row pieces fused as apart: the executor runs the fused matmul piece by piece as it
  // would its members, each piece's plan at m / pieces.
  const std::pair<int64_t, int64_t> summed[] = {{shapes[0].first, n}};
  const int64_t width_of_sum[] = {width};
  return row_pieces(dtype, m, shapes, slice_k) == row_pieces(dtype, m, summed, width_of_sum);
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

// Whether one layer's group (its members' shapes, int4 widths and packed bytes) runs fused:
// its plan at a row piece's rows (GroupJobs plans each piece so) is the fused one.
Result<bool> group_fuses(matmul::DType dtype, int64_t m, int cores, uint64_t align,
                         const std::vector<std::pair<int64_t, int64_t>>& shapes, const std::vector<int64_t>& widths,
                         const std::vector<uint64_t>& bytes) {
  if (!fusion_fits(dtype, m, shapes, widths, bytes, align)) return false;
  auto plan = executor_group_plan(dtype, m / row_pieces(dtype, m, shapes, widths), shapes, cores, widths, true);
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
  f.pieces.assign(f.first.size(), {});
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
      std::vector<int64_t> ns;
      for (const auto& s : shapes) ns.push_back(s.second);
      auto pieces = fused_pieces(d.dtype, shapes[0].first, ns, widths[0]);  // fusion_fits: it exists
      if (!pieces) return pieces.error();
      uint64_t at = 0;
      for (size_t i = 0; i < members.size(); ++i) {
        const size_t t = static_cast<size_t>(l) * per_layer + static_cast<size_t>(members[i]);
        f.first[t] = members.front();
        f.offset[t] = at;
        f.pieces[t] = std::move((*pieces)[i]);
        at += bytes[i];
      }
      for (int mm : members) f.bytes[static_cast<size_t>(l) * per_layer + static_cast<size_t>(mm)] = align_up(at, align);
    }
  return f;
}

}  // namespace ork::exec
