// LoaderStats as JSON, for tools (--json) and logs.
#pragma once

#include <nlohmann/json.hpp>

#include "lib/io/loader.h"

namespace ork::io {

nlohmann::json stats_to_json(const LoaderStats& stats);

}  // namespace ork::io
