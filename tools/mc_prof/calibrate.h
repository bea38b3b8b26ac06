// mc_prof's model outputs: the published figures against the timing model with its leave-
// one-out table (`--published`), and `--calibrate REPORT`, the model refitted from a board
// report (docs/timing-model.md "Board reports"). No device: the model is arithmetic.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace ork::tools {

// Every published figure (published.h) under the shipped constants (timing_model.h) and left out
// of a refit; `figures`, `model`, `training`, `held_out`, `leave_one_out` for the JSON
// object of `--published --json`.
nlohmann::json published_report();
// The same as a readable table.
std::string published_table(const nlohmann::json& report);

// `--calibrate REPORT`: reads the report, refits, prints old and new errors (a table, or
// JSON with `json`). Returns the exit code: 0, or 2 (Exit::bad_usage) for a report that
// cannot be read, with the reason on stderr.
int calibrate(const std::string& path, bool json);

}  // namespace ork::tools
