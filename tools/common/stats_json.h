// ork_stats and ork_memory_info as JSON, for the tools (ork_info --stats, ork_bench --decode
// --json): one key per field, named as the field (header-only).
#pragma once

#include <nlohmann/json.hpp>

#include "ork/ork.h"

namespace ork::tools {

inline nlohmann::json stats_json(const ork_stats& s) {
  return {{"calls", s.calls},
          {"pack_ns", s.pack_ns},
          {"submit_ns", s.submit_ns},
          {"device_ns", s.device_ns},
          {"wait_ns", s.wait_ns},
          {"unpack_ns", s.unpack_ns},
          {"bytes_to_device", s.bytes_to_device},
          {"bytes_from_device", s.bytes_from_device},
          {"context_builds", s.context_builds},
          {"context_hits", s.context_hits},
          {"weight_cache_hits", s.weight_cache_hits},
          {"weight_cache_misses", s.weight_cache_misses},
          {"wall_ns", s.wall_ns},
          {"plan_ns", s.plan_ns},
          {"submits", s.submits},
          {"device_unknown_calls", s.device_unknown_calls},
          {"context_evictions", s.context_evictions},
          {"emulator_ns", s.emulator_ns},
          {"cpu_threads", s.cpu_threads}};
}

inline nlohmann::json memory_json(const ork_memory_info& m) {
  return {{"exact", m.exact != 0},
          {"bytes_resident", m.bytes_resident},
          {"window_free_bytes", m.window_free_bytes},
          {"largest_allocation_bytes", m.largest_allocation_bytes},
          {"window_bytes", m.window_bytes},
          {"context_bytes", m.context_bytes},
          {"context_capacity_bytes", m.context_capacity_bytes},
          {"weight_cache_bytes", m.weight_cache_bytes},
          {"weight_cache_capacity_bytes", m.weight_cache_capacity_bytes}};
}

}  // namespace ork::tools
