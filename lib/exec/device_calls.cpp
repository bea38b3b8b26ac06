// The executor's calls of the device (device_calls.h).
#include "lib/exec/device_calls.h"

#include <utility>

#include <fmt/format.h>

#include "lib/exec/board_plan.h"
#include "lib/exec/chain_reference.h"
#include "lib/exec/unpack.h"
#include "lib/matmul/int4_bound.h"

namespace ork::exec {

DeviceCalls::DeviceCalls(const PackedModel& model, const PlanOptions& po, DeviceRef dev, Slots& slots,
                         const Fusion& fusion)
    : model_(model), po_(po), dev_(dev), slots_(slots), fusion_(fusion), checked_(model.tensors.size(), false) {}

GroupJobs& DeviceCalls::group_jobs(int window, int pieces, int piece) {
  auto& g = groups_[{window, pieces, piece}];
  if (!g) g = std::make_unique<GroupJobs>(*dev_.window(window).kmd, model_.desc.dtype, po_.m / pieces, dev_.cores);
  return *g;
}

DeviceCalls::~DeviceCalls() {
  groups_.clear();  // their contexts read the slots' BOs
  for (auto& [key, w] : views_) win(std::get<0>(key)).runner->forget(*w);
}

Status DeviceCalls::check_width(int slot, int layer, int matmul) {
  const PackedTensor& t = model_.tensor(layer, matmul);
  const size_t tensor = static_cast<size_t>(layer) * model_.desc.matmuls.size() + static_cast<size_t>(matmul);
  if (model_.desc.dtype != matmul::DType::int4 || t.slice_k <= matmul::kInt4SliceK || checked_[tensor])
    return {};  // 480 wide (or the dtype's) holds any int4 weights: 480 x 64 < 32767
  const MatmulDesc& md = model_.desc.matmuls[static_cast<size_t>(matmul)];
  auto plan = layout_plan(model_.desc.dtype, md.k, md.n, t.slice_k);
  if (!plan) return plan.error();
  std::vector<uint8_t> gathered;  // a fused member's K-slices, apart in the slot (fusion.h)
  const std::span<const uint8_t> bytes = fusion_.tensor_bytes(tensor, slots_.spans[static_cast<size_t>(slot)], t.bytes, gathered);
  if (auto s = matmul::int4_native_slices_fit(*plan, bytes); !s)
    return make_error(s.error().code, fmt::format("tensor \"{}\" of layer {}: the file's K-slice width {} is wider than "
                                                  "its weights allow ({}); repack the model with ork_pack",
                                                  md.name, layer, t.slice_k, s.error().message));
  checked_[tensor] = true;
  return {};
}

Status DeviceCalls::run(int slot, int layer, int matmul, const Activation& a, std::vector<uint8_t>& c) {
  const ModelDesc& d = model_.desc;
  const MatmulDesc& md = d.matmuls[static_cast<size_t>(matmul)];
  if (!dev_.on_npu()) {  // cpu: the reference's fast path on the unpacked slot
    if (auto s = check_width(slot, layer, matmul); !s) return s;  // the file is refused on every device
    const size_t i = tensor(layer, matmul);
    const PackedTensor& t = model_.tensor(layer, matmul);
    std::vector<uint8_t> gathered, w;  // a fused member's bytes from their places in the group's slot
    const std::span<const uint8_t> bytes = fusion_.tensor_bytes(i, slots_.spans[static_cast<size_t>(slot)], t.bytes, gathered);
    if (auto s = unpack_weights(d.dtype, md.k, md.n, bytes, w, t.slice_k); !s) return s;
    return reference_matmul(d.dtype, a, w, md.k, md.n, c);
  }
  if (fusion_.fused(tensor(layer, matmul))) return run_fused(slot, layer, matmul, a, c);
  auto w = weights_of(slot, layer, matmul);
  if (!w) return w.error();
  const std::vector<uint8_t> op = operand_bytes(d.dtype, a);
  c.resize(static_cast<size_t>(output_bytes(po_.m, md.n)));
  matmul::RunOptions ro;
  ro.cores = dev_.cores;
  return win(slot).runner->run(**w, op.data(), po_.m, c.data(), ro);
}

// The slot as resident weights of the tensor's shape and width (made once per slot, shape
// and width), synced for the NPU: the read wrote it from the CPU.
Result<const matmul::ResidentWeights*> DeviceCalls::weights_of(int slot, int layer, int matmul) {
  const MatmulDesc& md = model_.desc.matmuls[static_cast<size_t>(matmul)];
  const int64_t width = model_.tensor(layer, matmul).slice_k;
  const driver::Bo& bo = *slots_.bos[static_cast<size_t>(slot)];
  if (auto s = check_width(slot, layer, matmul); !s) return s.error();
  if (auto s = win(slot).kmd->bo_sync(bo, driver::SyncDir::to_device); !s) return s.error();
  auto key = std::make_tuple(slot, md.k, md.n, width);
  auto it = views_.find(key);
  if (it == views_.end()) {
    auto w = matmul::ResidentWeights::view(bo, model_.desc.dtype, md.k, md.n, width);
    if (!w) return w.error();
    it = views_.emplace(key, std::move(*w)).first;
  }
  return it->second.get();
}

// A job of ours still in flight on the same context is completed first by the job's rule
// (lib/matmul/job.h): its A and output BOs are reused.
Result<std::vector<std::unique_ptr<matmul::Job>>> DeviceCalls::launch(int slot, int layer, int matmul, const Activation& a,
                                                                      std::vector<uint8_t>& c) {
  const MatmulDesc& md = model_.desc.matmuls[static_cast<size_t>(matmul)];
  if (fusion_.fused(tensor(layer, matmul))) return make_error(-ENOTSUP, "a fused group's member alone runs blocking");
  auto w = weights_of(slot, layer, matmul);
  if (!w) return w.error();
  matmul::RunOptions ro;
  ro.cores = dev_.cores;
  matmul::RunStats stats;
  auto ctx = win(slot).runner->acquire(**w, po_.m, ro, stats);
  if (!ctx) return ctx.error();
  const std::vector<uint8_t> op = operand_bytes(model_.desc.dtype, a);
  c.resize(static_cast<size_t>(output_bytes(po_.m, md.n)));
  auto npu = std::make_unique<matmul::Job>(*win(slot).kmd, stats);
  if (auto s = npu->add(std::move(*ctx), op.data(), c.data()); !s) return s.error();
  if (auto s = npu->submit(); !s) return s.error();
  std::vector<std::unique_ptr<matmul::Job>> jobs;
  jobs.push_back(std::move(npu));
  return jobs;
}

Result<std::vector<std::unique_ptr<matmul::Job>>> DeviceCalls::launch_group(std::span<const int> slots, int layer,
                                                                            std::span<const int> matmuls,
                                                                            std::span<const Activation> a,
                                                                            std::vector<std::vector<uint8_t>>& c,
                                                                            bool& fused) {
  auto window = window_of(slots);
  if (!window) return window.error();
  fused = fusion_.fused(tensor(layer, matmuls[0]));
  if (fused) return launch_fused(slots[0], layer, matmuls, a, c, *window);
  std::vector<std::vector<uint8_t>> ops(matmuls.size());
  std::vector<GroupMember> members;
  for (size_t i = 0; i < matmuls.size(); ++i) {
    const MatmulDesc& md = model_.desc.matmuls[static_cast<size_t>(matmuls[i])];
    auto w = weights_of(slots[i], layer, matmuls[i]);  // syncs the slot for the NPU
    if (!w) return w.error();
    ops[i] = operand_bytes(model_.desc.dtype, a[i]);
    c[i].resize(static_cast<size_t>(output_bytes(po_.m, md.n)));
    members.push_back({slots_.bos[static_cast<size_t>(slots[i])].get(), md.k, md.n, ops[i].data(), c[i].data(),
                       (*w)->slice_k()});
  }
  const int pieces = this->pieces(layer, matmuls);
  const int64_t rows = po_.m / pieces, bits = matmul::element_bits(model_.desc.dtype);
  std::vector<std::unique_ptr<matmul::Job>> jobs;
  for (int p = 0; p < pieces; ++p) {
    std::vector<GroupMember> piece = members;  // rows [p * rows, (p + 1) * rows): A and C row-major
    for (GroupMember& g : piece) {
      g.a = static_cast<const uint8_t*>(g.a) + p * rows * g.k * bits / 8;  // whole bytes (row_pieces)
      g.c = static_cast<uint8_t*>(g.c) + output_bytes(p * rows, g.n);
    }
    auto job = group_jobs(*window, pieces, p).launch(piece);
    if (!job) return job.error();
    jobs.push_back(std::move(*job));
  }
  return jobs;
}

Result<int> DeviceCalls::window_of(std::span<const int> slots) const {
  const int window = slots_.window[static_cast<size_t>(slots[0])];  // a layer is whole in one window
  for (int slot : slots)
    if (slots_.window[static_cast<size_t>(slot)] != window)
      return make_error(-EINVAL, fmt::format("a group's slots {} and {} are in NPU windows {} and {}", slots[0], slot,
                                             window, slots_.window[static_cast<size_t>(slot)]));
  return window;
}

int DeviceCalls::pieces(int layer, std::span<const int> matmuls) const {
  std::vector<std::pair<int64_t, int64_t>> shapes;
  std::vector<int64_t> widths;
  for (int j : matmuls) {
    const MatmulDesc& md = model_.desc.matmuls[static_cast<size_t>(j)];
    shapes.emplace_back(md.k, md.n);
    widths.push_back(model_.tensor(layer, j).slice_k);
  }
  return row_pieces(model_.desc.dtype, po_.m, shapes, widths);
}

Result<std::unique_ptr<matmul::Job>> DeviceCalls::launch_piece(std::span<const int> slots, int layer,
                                                               std::span<const int> matmuls, std::span<const Activation> a,
                                                               std::vector<std::vector<uint8_t>>& c, int piece, int pieces) {
  auto window = window_of(slots);
  if (!window) return window.error();
  const int64_t rows = po_.m / pieces;
  if (a[0].rows != rows) return make_error(-EINVAL, fmt::format("a piece of {} rows given {}", rows, a[0].rows));
  if (fusion_.fused(tensor(layer, matmuls[0]))) {  // the members read one A: the fused matmul's piece
    const std::vector<uint8_t> op = operand_bytes(model_.desc.dtype, a[0]);
    return launch_fused_piece(slots[0], layer, matmuls, op.data(), c, piece, pieces, *window);
  }
  std::vector<std::vector<uint8_t>> ops(matmuls.size());  // packed into the job's A buffers at launch
  std::vector<GroupMember> members;
  for (size_t i = 0; i < matmuls.size(); ++i) {
    const MatmulDesc& md = model_.desc.matmuls[static_cast<size_t>(matmuls[i])];
    auto w = weights_of(slots[i], layer, matmuls[i]);  // syncs the slot for the NPU
    if (!w) return w.error();
    if (a[i].rows != rows) return make_error(-EINVAL, fmt::format("a piece of {} rows given {}", rows, a[i].rows));
    ops[i] = operand_bytes(model_.desc.dtype, a[i]);
    c[i].resize(static_cast<size_t>(output_bytes(po_.m, md.n)));
    members.push_back({slots_.bos[static_cast<size_t>(slots[i])].get(), md.k, md.n, ops[i].data(),
                       c[i].data() + output_bytes(piece * rows, md.n), (*w)->slice_k()});
  }
  return group_jobs(*window, pieces, piece).launch(members);
}

}  // namespace ork::exec
