// Host and device overlapped (docs/execution.md "Host and device overlapped"): the intervals
// of the host's work and the NPU's jobs over one layer's groups, in the order the executor
// runs them, and how much of the host's time the NPU hides. The board projection adds only
// the exposed part to the device time; nothing here is assumed, it is the schedule.
//
// The executor's order (executor.cpp, device_calls.cpp): a group's pieces (row_pieces,
// board_plan.h) are launched one after another, each after its members' host work before the
// device (plan lookup, packing A, the submit), so piece p + 1's packing runs while the NPU
// runs piece p; then the pieces are completed in order, each after its job ended, with its
// members' host work after the device (unpacking C), so piece p's unpacking runs while the
// NPU runs piece p + 1. The NPU runs one job at a time, in submission order.
// Between groups (each reads the previous one's outputs, and a layer's first group the
// previous layer's): when both run in two pieces (`pipelined`), the next group's piece p is
// launched as soon as the previous group's piece p is unpacked, since every step between
// them works row by row (activation.h) and the pieces are the same rows; so its packing
// runs while the NPU runs the previous group's piece 1, and the next unpacking while it runs
// this group's piece 0. Otherwise the next group starts when the whole group is unpacked.
#pragma once

#include <span>
#include <vector>

namespace ork::exec {

// One matmul call's host time, measured: before its job reaches the NPU (plan lookup,
// packing A, the submit ioctl) and after it ended (unpacking C).
struct HostParts {
  double before_ns = 0, after_ns = 0;
  double total_ns() const { return before_ns + after_ns; }
};

// One group of a layer: `pieces` row pieces, each one job of `piece_device_ns` on the NPU;
// `host[j]` member j's host parts at one piece's rows.
struct GroupWork {
  int pieces = 1;
  double piece_device_ns = 0;
  std::vector<HostParts> host;
};

// The schedule: `span_ns` from the first host work to the last (host and NPU start
// free); `device_ns` the NPU's jobs; `host_ns` the host's work; `exposed_ns` = span - device,
// the time the NPU waits for the host; `overlapped_ns` = host - exposed, the host's time
// spent while the NPU ran.
struct HostSchedule {
  double span_ns = 0, device_ns = 0, host_ns = 0, exposed_ns = 0, overlapped_ns = 0;
};

// Whether the executor launches `next`'s pieces one by one as `prev`'s are unpacked.
inline bool pipelined(const GroupWork& prev, const GroupWork& next) { return prev.pieces == 2 && next.pieces == 2; }

// The schedule of `layers` layers of `groups` one after another (the groups of one layer, in
// order; a step's layers pipeline into each other as its groups do).
HostSchedule schedule_layer(std::span<const GroupWork> groups, int layers = 1);

}  // namespace ork::exec
