// A run's trace (docs/execution.md "ork_run"): the compute and I/O slices of the executor,
// as Chrome / Perfetto trace JSON (chrome://tracing, ui.perfetto.dev).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ork::exec {

struct TraceEvent {
  std::string name;
  int thread = 0;  // 0 compute (a matmul on the device), 1 I/O (a tensor read)
  int64_t begin_ns = 0, end_ns = 0;
};

// The events on two tracks, times relative to the earliest event, in microseconds.
std::string trace_json(const std::vector<TraceEvent>& events);

}  // namespace ork::exec
