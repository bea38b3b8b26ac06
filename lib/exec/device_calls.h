// The executor's calls of the device (executor.cpp's device thread): a matmul run blocking
// (the cpu backend's reference fast path, or the NPU's runner), one matmul handed to the NPU
// as a matmul job, or a group of a layer's matmuls handed to it as its board plan, one
// chained job (group_job.h). The weights are the slots as the reader filled them. Over
// several NPU windows (windows.h) each call goes through its slot's window's kmd and runner,
// and a group is built in its window: its members are one layer's, and a layer is whole in
// one window.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <tuple>
#include <vector>

#include "driver/common/result.h"
#include "lib/exec/activation.h"
#include "lib/exec/executor.h"
#include "lib/exec/group_job.h"
#include "lib/exec/device_slots.h"
#include "lib/matmul/job.h"

namespace ork::exec {

class DeviceCalls {
 public:
  // `fusion`: the plan's fused groups (fusion.h), their members side by side in one slot.
  DeviceCalls(const PackedModel& model, const PlanOptions& po, DeviceRef dev, Slots& slots, const Fusion& fusion);
  ~DeviceCalls();  // the runner forgets the slots' views
  DeviceCalls(const DeviceCalls&) = delete;
  DeviceCalls& operator=(const DeviceCalls&) = delete;

  // Matmul `matmul` of `layer` on the weights in `slot`, blocking; C into `c`. A fused
  // group's member runs its group's fused matmul and keeps its own columns.
  Status run(int slot, int layer, int matmul, const Activation& a, std::vector<uint8_t>& c);
  // The same handed to the NPU (not waited for): its context from the runner's cache, A
  // packed, the first slice group submitted; C into `c` (sized here) at completion.
  // -ENOTSUP for a fused group's member (the caller runs it with run()).
  Result<std::vector<std::unique_ptr<matmul::Job>>> launch(int slot, int layer, int matmul, const Activation& a,
                                                           std::vector<uint8_t>& c);
  // Matmuls of one group (slots[i], matmuls[i], a[i] -> c[i]) as chained jobs, one per row
  // piece (row_pieces, board_plan.h: the rows in two halves, each its own job of the plan at
  // m / 2 on buffers of its own, launched one after the other, so the second half is packed
  // while the NPU runs the first), to be completed in order. -ENOTSUP: the group's plan does
  // not chain; the caller runs them with run(). -EINVAL: the slots are in more than one window.
  // A whole fused group (fusion.h) is one job of the fused matmul (`fused` set), whose C's
  // columns go straight to each member's c[i] at completion; part of one: -ENOTSUP.
  Result<std::vector<std::unique_ptr<matmul::Job>>> launch_group(std::span<const int> slots, int layer,
                                                                 std::span<const int> matmuls,
                                                                 std::span<const Activation> a,
                                                                 std::vector<std::vector<uint8_t>>& c, bool& fused);
  // Row pieces the group runs in (row_pieces, board_plan.h, at its tensors' int4 widths).
  int pieces(int layer, std::span<const int> matmuls) const;
  // Whether matmul `matmul` of `layer` is a fused group's member (fusion.h).
  bool fused(int layer, int matmul) const { return fusion_.fused(tensor(layer, matmul)); }
  // Piece `piece` of `pieces` of such a group alone (a fused group's: its fused matmul's
  // piece): a[i] holds that piece's rows of A only,
  // c[i] (sized here to all M rows) gets that piece's rows of C at completion. The executor
  // launches a group piece by piece as the previous group's pieces are unpacked
  // (docs/execution.md "Host and device overlapped").
  Result<std::unique_ptr<matmul::Job>> launch_piece(std::span<const int> slots, int layer, std::span<const int> matmuls,
                                                    std::span<const Activation> a, std::vector<std::vector<uint8_t>>& c,
                                                    int piece, int pieces);

 private:
  // The one NPU window of a group's slots (a layer is whole in one window); -EINVAL if not.
  Result<int> window_of(std::span<const int> slots) const;
  // The slot as resident weights of tensor (layer, matmul): its shape and int4 width.
  Result<const matmul::ResidentWeights*> weights_of(int slot, int layer, int matmul);
  // int4 weights wider than the floor (PackedTensor::slice_k past 480) against their bound
  // (lib/matmul/int4_bound.h), the first time the tensor is used, in the slot it was read
  // into, before anything runs on it: a file whose width its weights do not allow is
  // refused, naming the tensor, instead of run to saturated sums. Other tensors pass.
  Status check_width(int slot, int layer, int matmul);
  size_t tensor(int layer, int matmul) const {
    return static_cast<size_t>(layer) * model_.desc.matmuls.size() + static_cast<size_t>(matmul);
  }
  // A fused group's members in order (those sharing `matmul`'s first member), its N summed,
  // and where `matmul`'s columns start in it.
  struct Group {
    std::vector<int> members;
    int64_t n = 0, column = 0;
  };
  Group group_of(int layer, int matmul) const;
  std::vector<int64_t> member_ns(const Group& g) const;  // the members' N, in order
  // The slot as the fused group's weights: K x the summed N, synced for the NPU.
  Result<const matmul::ResidentWeights*> fused_weights(int slot, int layer, int matmul);
  Status run_fused(int slot, int layer, int matmul, const Activation& a, std::vector<uint8_t>& c);
  // launch_group of a fused group (-ENOTSUP unless `matmuls` is the whole group, in order):
  // one job a row piece, as the members' would be.
  Result<std::vector<std::unique_ptr<matmul::Job>>> launch_fused(int slot, int layer, std::span<const int> matmuls,
                                                                 std::span<const Activation> a,
                                                                 std::vector<std::vector<uint8_t>>& c, int window);
  // Row piece `piece` of a fused group: `a` that piece's rows of the members' one A (the
  // runner's format), each c[i] sized to all M rows and given that piece's rows at completion.
  Result<std::unique_ptr<matmul::Job>> launch_fused_piece(int slot, int layer, std::span<const int> matmuls, const void* a,
                                                          std::vector<std::vector<uint8_t>>& c, int piece, int pieces,
                                                          int window);
  DeviceRef win(int slot) const { return dev_.window(slots_.window[static_cast<size_t>(slot)]); }  // the slot's window

  const PackedModel& model_;
  const PlanOptions& po_;
  DeviceRef dev_;
  Slots& slots_;
  const Fusion& fusion_;
  std::map<std::tuple<int, int64_t, int64_t, int64_t>, std::unique_ptr<matmul::ResidentWeights>> views_;  // slot, K, N, width
  std::vector<bool> checked_;  // per tensor (layer x matmuls + matmul): check_width passed
  GroupJobs& group_jobs(int window, int pieces, int piece);
  // Per NPU window, row pieces and piece: a half's jobs keep contexts (A and C BOs) of their
  // own, so the second half is packed while the first is in flight (the job's rule).
  std::map<std::tuple<int, int, int>, std::unique_ptr<GroupJobs>> groups_;
};

}  // namespace ork::exec
