// ork_info --stats: a device's statistics and memory figures after a short workload.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace ork::tools {

// Opens `name`, makes two decode-shaped int8 weights resident, runs `calls` M = 1 matmuls
// (each checked against the oracle) and reports {"name", "workload", "stats", "memory"}
// (or "error"). *ok: the device opened and every result was exact.
nlohmann::json stats_report(const std::string& name, int calls, bool* ok);

}  // namespace ork::tools
