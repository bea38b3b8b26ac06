// Host and device overlapped (overlap.h): the executor's order, replayed on two clocks.
#include "lib/exec/overlap.h"

#include <algorithm>

namespace ork::exec {

HostSchedule schedule_layer(std::span<const GroupWork> groups, int layers) {
  HostSchedule s;
  double host = 0;    // when the host thread is free
  double device = 0;  // when the NPU is free
  const GroupWork* prev = nullptr;  // the group in flight: launched, not yet completed
  std::vector<double> prev_ends;    // per piece of prev: when its job ends
  // Piece p of prev waited for and unpacked (its members' C).
  auto complete = [&](size_t p) {
    host = std::max(host, prev_ends[p]);
    for (const HostParts& h : prev->host) host += h.after_ns;
  };
  // Piece p of g packed and submitted; its job runs after the NPU's previous one.
  auto launch = [&](const GroupWork& g, std::vector<double>& ends) {
    for (const HostParts& h : g.host) host += h.before_ns;
    device = std::max(host, device) + g.piece_device_ns;
    ends.push_back(device);
    s.device_ns += g.piece_device_ns;
  };
  for (int l = 0; l < layers; ++l)
    for (const GroupWork& g : groups) {
      std::vector<double> ends;
      if (prev != nullptr && pipelined(*prev, g)) {
        for (size_t p = 0; p < 2; ++p) {  // g's piece p as soon as prev's piece p is unpacked
          complete(p);
          launch(g, ends);
        }
      } else {
        for (size_t p = 0; prev != nullptr && p < prev_ends.size(); ++p) complete(p);
        for (int p = 0; p < g.pieces; ++p) launch(g, ends);
      }
      for (const HostParts& h : g.host) s.host_ns += h.total_ns() * g.pieces;
      prev = &g;
      prev_ends = std::move(ends);
    }
  for (size_t p = 0; prev != nullptr && p < prev_ends.size(); ++p) complete(p);
  s.span_ns = std::max(host, device);
  s.exposed_ns = s.span_ns - s.device_ns;
  s.overlapped_ns = s.host_ns - s.exposed_ns;
  return s;
}

}  // namespace ork::exec
