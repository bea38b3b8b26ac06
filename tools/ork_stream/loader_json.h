// LoaderStats as JSON, for ork_stream_bench --json (the one tool that runs the layer loader).
#pragma once

#include <nlohmann/json.hpp>

#include "lib/io/loader.h"

namespace ork::io::tools {

nlohmann::json stats_to_json(const LoaderStats& stats);

}  // namespace ork::io::tools
