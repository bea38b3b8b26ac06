// The executor's calls of a fused group (device_calls.h, fusion.h): the members' weights in one
// slot, K-slice by K-slice (fusion.h fused_pieces), run as one matmul of K x their N summed,
// and C's columns are unpacked straight into each member's output (fusion.h member_columns).
#include <algorithm>

#include <fmt/format.h>

#include "lib/exec/device_calls.h"
#include "lib/exec/fusion.h"

namespace ork::exec {

DeviceCalls::Group DeviceCalls::group_of(int layer, int matmul) const {
  Group g;
  const int first = fusion_.first[tensor(layer, matmul)];
  for (size_t j = 0; j < model_.desc.matmuls.size(); ++j) {
    if (fusion_.first[tensor(layer, static_cast<int>(j))] != first) continue;
    if (static_cast<int>(j) == matmul) g.column = g.n;
    g.members.push_back(static_cast<int>(j));
    g.n += model_.desc.matmuls[j].n;
  }
  return g;
}

// Made once per slot, shape and width like weights_of's; the members' widths are one
// (fusable), and their bytes are checked member by member.
Result<const matmul::ResidentWeights*> DeviceCalls::fused_weights(int slot, int layer, int matmul) {
  const Group g = group_of(layer, matmul);
  for (int j : g.members)
    if (auto s = check_width(slot, layer, j); !s) return s.error();
  const int64_t k = model_.desc.matmuls[static_cast<size_t>(matmul)].k;
  const int64_t width = model_.tensor(layer, matmul).slice_k;
  const driver::Bo& bo = *slots_.bos[static_cast<size_t>(slot)];
  if (auto s = win(slot).kmd->bo_sync(bo, driver::SyncDir::to_device); !s) return s.error();
  auto key = std::make_tuple(slot, k, g.n, width);
  auto it = views_.find(key);
  if (it == views_.end()) {
    auto w = matmul::ResidentWeights::view(bo, model_.desc.dtype, k, g.n, width);
    if (!w) return w.error();
    it = views_.emplace(key, std::move(*w)).first;
  }
  return it->second.get();
}

// A member alone (the blocking path: one matmul in flight, group jobs off): the group's
// fused matmul, of which only its own columns are unpacked.
Status DeviceCalls::run_fused(int slot, int layer, int matmul, const Activation& a, std::vector<uint8_t>& c) {
  auto w = fused_weights(slot, layer, matmul);
  if (!w) return w.error();
  const Group g = group_of(layer, matmul);
  const auto own = static_cast<int>(std::find(g.members.begin(), g.members.end(), matmul) - g.members.begin());
  std::vector<std::vector<uint8_t>> out;
  const std::vector<matmul::ColumnPart> parts = member_columns(member_ns(g), po_.m, out, own);
  const std::vector<uint8_t> op = operand_bytes(model_.desc.dtype, a);
  matmul::RunOptions ro;
  ro.cores = dev_.cores;
  if (auto s = win(slot).runner->run(**w, op.data(), po_.m, nullptr, ro, nullptr, parts); !s) return s;
  c = std::move(out[static_cast<size_t>(own)]);
  return {};
}

std::vector<int64_t> DeviceCalls::member_ns(const Group& g) const {
  std::vector<int64_t> ns;
  for (int j : g.members) ns.push_back(model_.desc.matmuls[static_cast<size_t>(j)].n);
  return ns;
}

Result<std::vector<std::unique_ptr<matmul::Job>>> DeviceCalls::launch_fused(int slot, int layer,
                                                                            std::span<const int> matmuls,
                                                                            std::span<const Activation> a,
                                                                            std::vector<std::vector<uint8_t>>& c,
                                                                            int window) {
  const int pieces = this->pieces(layer, matmuls);  // the summed shape's too (fusion_fits)
  const int64_t rows = po_.m / pieces, bits = matmul::element_bits(model_.desc.dtype);
  const std::vector<uint8_t> op = operand_bytes(model_.desc.dtype, a[0]);  // the members read one A
  std::vector<std::unique_ptr<matmul::Job>> jobs;
  for (int p = 0; p < pieces; ++p) {  // rows [p * rows, (p + 1) * rows): A and C row-major
    auto job = launch_fused_piece(slot, layer, matmuls, op.data() + p * rows * a[0].width * bits / 8, c, p, pieces, window);
    if (!job) return job.error();
    jobs.push_back(std::move(*job));
  }
  return jobs;
}

Result<std::unique_ptr<matmul::Job>> DeviceCalls::launch_fused_piece(int slot, int layer, std::span<const int> matmuls,
                                                                     const void* a, std::vector<std::vector<uint8_t>>& c,
                                                                     int piece, int pieces, int window) {
  const Group g = group_of(layer, matmuls[0]);
  if (!std::equal(matmuls.begin(), matmuls.end(), g.members.begin(), g.members.end()))
    return make_error(-ENOTSUP, "part of a fused group runs blocking");
  auto w = fused_weights(slot, layer, matmuls[0]);
  if (!w) return w.error();
  const std::vector<int64_t> ns = member_ns(g);
  std::vector<matmul::ColumnPart> parts = member_columns(ns, po_.m, c);  // matmuls is g.members; C of all M rows
  const int64_t row0 = piece * (po_.m / pieces);
  for (matmul::ColumnPart& part : parts) part.c = static_cast<uint8_t*>(part.c) + output_bytes(row0, part.n);
  std::vector<GroupMember> members;
  for (int j : g.members) {
    const MatmulDesc& md = model_.desc.matmuls[static_cast<size_t>(j)];
    members.push_back({slots_.bos[static_cast<size_t>(slot)].get(), md.k, md.n, a, nullptr, (*w)->slice_k()});
  }
  return group_jobs(window, pieces, piece).launch_fused(members, parts);
}

}  // namespace ork::exec
