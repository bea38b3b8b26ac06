// Reading a board report (board_report.h). Every field is checked before it is used.
#include "tools/mc_prof/board_report.h"

#include <cerrno>
#include <cmath>
#include <cstring>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tools/common/input_limits.h"

#include "driver/common/cbuf_limits.h"
#include "driver/common/json.h"
#include "driver/common/npu_cores.h"

namespace ork::tools {
namespace {

using nlohmann::json;

constexpr int64_t kReportMaxDim = int64_t{1} << 24;  // mc_prof's own shape bound (mc_prof.cpp)

// "" when `f[key]` is an integer in [lo, hi] (stored in `out`), else why not (json_int).
std::string whole(const json& f, const char* key, int64_t lo, int64_t hi, int64_t& out) {
  auto v = json_int<int64_t>(f, key, lo, hi, "");
  if (!v) return v.error().message;
  out = *v;
  return {};
}

// "" when figure `f` is well formed (stored in `out`), else why not.
std::string figure(const json& f, Figure& out) {
  if (!f.is_object()) return fmt::format("must be an object, got {}", f.dump());
  if (!f.contains("name")) return "missing \"name\"";
  if (!f["name"].is_string() || f["name"].get<std::string>().empty()) return "\"name\" must be a non-empty string";
  out.name = f["name"].get<std::string>();
  if (!f.contains("measured_us")) return "missing \"measured_us\"";
  const json& t = f["measured_us"];
  if (!t.is_number()) return fmt::format("\"measured_us\" must be a number, got {}", t.dump());
  out.published_us = t.get<double>();
  if (!std::isfinite(out.published_us) || out.published_us <= 0)
    return fmt::format("\"measured_us\" must be a positive finite time, got {}", t.dump());
  Setup& s = out.setup;
  int64_t cores = 0;
  for (auto [key, lo, hi, dst] : {std::tuple{"m", int64_t{1}, kReportMaxDim, &s.m}, std::tuple{"k", int64_t{1}, kReportMaxDim, &s.k},
                                  std::tuple{"n", int64_t{1}, kReportMaxDim, &s.n}, std::tuple{"cores", int64_t{1}, int64_t{ork::hw::kNpuCores}, &cores},
                                  std::tuple{"mc_cap", int64_t{0}, ork::hw::kMaxRowsPerTask, &s.mc}})
    if (std::string e = whole(f, key, lo, hi, *dst); !e.empty()) return e;
  s.cores = static_cast<int>(cores);
  const std::string layout = f.contains("layout") && f["layout"].is_string() ? f["layout"].get<std::string>() : "chained";
  if (f.contains("layout") && (!f["layout"].is_string() || (layout != "chained" && layout != "per_tile")))
    return fmt::format("\"layout\" must be \"chained\" or \"per_tile\", got {}", f["layout"].dump());
  s.per_tile = layout == "per_tile";
  if (s.per_tile && s.mc < 1) return "\"per_tile\" needs \"mc_cap\" >= 1 (the rows of every M-tile)";
  out.source = "board report";
  out.train = true;
  return {};
}

}  // namespace

Result<BoardReport> read_board_report(const std::string& path) {
  // A regular file of at most 64 MiB (a board report is a few KiB): a FIFO or a device is
  // refused by name, never waited on (tools/common/input_limits.h); its JSON's nesting is
  // bounded before it is parsed (driver/common/json.h).
  std::string text;
  if (auto e = read_file_bounded("report", path, uint64_t{64} << 20, &text); !e.empty())
    return make_error(-EINVAL, fmt::format("cannot read the report '{}': {}", path, e));
  auto parsed = parse_json_bounded(text, fmt::format("report '{}'", path));
  if (!parsed) return parsed.error();
  const nlohmann::json& j = *parsed;
  if (!j.is_object() || !j.contains("figures"))
    return make_error(-EINVAL, fmt::format("report '{}': missing key \"figures\" (docs/timing-model.md \"Board reports\")", path));
  if (!j["figures"].is_array() || j["figures"].empty())
    return make_error(-EINVAL, fmt::format("report '{}': \"figures\" must be a non-empty list", path));
  BoardReport out;
  for (size_t i = 0; i < j["figures"].size(); ++i) {
    const nlohmann::json& item = j["figures"][i];
    Figure f;
    if (std::string e = figure(item, f); !e.empty()) {
      const std::string who = f.name.empty() ? "" : fmt::format(" (\"{}\")", f.name);
      return make_error(-EINVAL, fmt::format("report '{}': figures[{}]{}: {}", path, i, who, e));
    }
    // The board runbook (docs/board.md) reports both interfaces under the same names.
    if (item.contains("interface") && item["interface"].is_string())
      f.name = item["interface"].get<std::string>() + " " + f.name;
    if (item.contains("device_source") && item["device_source"] == "wall") {
      out.skipped.push_back(f.name + ": measured_us is a wall time (device_source \"wall\")");
      continue;
    }
    out.figures.push_back(std::move(f));
  }
  if (j.contains("split")) {
    if (!j["split"].is_array()) return make_error(-EINVAL, fmt::format("report '{}': \"split\" must be a list", path));
    for (size_t i = 0; i < j["split"].size(); ++i) {
      auto r = split_row_from_json(j["split"][i]);
      if (!r) return make_error(-EINVAL, fmt::format("report '{}': split[{}]: {}", path, i, r.error().message));
      const nlohmann::json& iface = j["split"][i].contains("interface") ? j["split"][i]["interface"] : nlohmann::json("");
      out.split[iface.is_string() ? iface.get<std::string>() : ""].push_back(*r);
    }
  }
  if (out.figures.empty())
    return make_error(-EINVAL, fmt::format("report '{}': no figure with a device time (every one is "
                                           "\"device_source\": \"wall\")", path));
  return out;
}

}  // namespace ork::tools
