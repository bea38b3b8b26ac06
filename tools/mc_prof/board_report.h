// A board report for `mc_prof --calibrate` (format: docs/timing-model.md "Board reports"):
// {"figures": [{"name", "measured_us", "m", "k", "n", "cores", "mc_cap", "layout"?}, ...]}.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "driver/common/result.h"
#include "tools/mc_prof/published.h"
#include "tools/mc_prof/split.h"

namespace ork::tools {

struct BoardReport {
  std::vector<Figure> figures;        // published_us = measured_us; named "interface name"
  std::vector<std::string> skipped;   // figures whose measured_us is a wall time, and why
  // The submit / task experiment's rows (report key "split", optional), by interface.
  std::map<std::string, std::vector<SplitRow>> split;
};

// The report's device-time figures, or -EINVAL with a message naming the file, the figure
// and the problem (missing file, bad JSON, a missing or wrong key, a time that is not a
// positive finite number). A figure with "device_source": "wall" (rocket: no
// hw_elapse_time, the submit's wall time) is skipped: the model is device time.
Result<BoardReport> read_board_report(const std::string& path);

}  // namespace ork::tools
