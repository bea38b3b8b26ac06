// Host and device overlapped (overlap.h): the executor's order, replayed on two clocks.
#include "lib/exec/overlap.h"

#include <algorithm>

namespace ork::exec {

HostSchedule schedule_layer(std::span<const GroupWork> groups) {
  HostSchedule s;
  double host = 0;    // when the host thread is free
  double device = 0;  // when the NPU is free
  for (const GroupWork& g : groups) {
    std::vector<double> ends;  // per piece: when its job ends
    for (int p = 0; p < g.pieces; ++p) {
      for (const HostParts& h : g.host) host += h.before_ns;  // its members packed, then submitted
      const double start = std::max(host, device);              // jobs run in submission order
      device = start + g.piece_device_ns;
      ends.push_back(device);
      s.device_ns += g.piece_device_ns;
    }
    for (int p = 0; p < g.pieces; ++p) {
      host = std::max(host, ends[static_cast<size_t>(p)]);  // the wait for piece p
      for (const HostParts& h : g.host) host += h.after_ns;  // its members' C unpacked
    }
    for (const HostParts& h : g.host) s.host_ns += h.total_ns() * g.pieces;
  }
  s.span_ns = std::max(host, device);
  s.exposed_ns = s.span_ns - s.device_ns;
  s.overlapped_ns = s.host_ns - s.exposed_ns;
  return s;
}

}  // namespace ork::exec
