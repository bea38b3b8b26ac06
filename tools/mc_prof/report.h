// mc_prof's outputs: a readable table, JSON, CSV, and an SVG plot of a sweep.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tools/mc_prof/measure.h"

namespace ork::tools {

struct Row {
  std::string label;   // the swept value, e.g. "mc<=31" or "K=2048"
  Measurement m;
};

std::string table(const std::vector<Row>& rows);
// `timing`: the emulator's mode ("fast", "timed", "zero-time"), "" on a board (JSON null).
// `extra`: more keys for the object (--published: the published figures, calibrate.h).
std::string json(const std::vector<Row>& rows, const std::string& sweep, const std::string& device,
                 const std::string& timing, const nlohmann::json& extra = nlohmann::json::object());
std::string csv(const std::vector<Row>& rows);
// µs per matmul (and device µs when known) against the swept value.
// `with_wall` false: device time only (the emulator in fast mode, where wall time is the
// emulator's own CPU work and would flatten the device line).
std::string svg(const std::vector<Row>& rows, const std::string& title, bool with_wall = true);

}  // namespace ork::tools
