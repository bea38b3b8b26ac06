// Output of the ork_sched tool: text and JSON reports, an SVG Gantt chart and a
// Perfetto/Chrome trace of the input order above the new order. Kept out of lib/sched,
// which depends on the standard library only.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lib/sched/chooser.h"

namespace ork::sched {

// One order played out on the hardware model, for the pictures.
struct Panel {
  std::string title;
  SimResult sim;               // with timeline and live curve
  std::vector<SwapDma> swaps;  // the pool's spill/reload DMA in this order
};

// The input order and the committed order, each priced with its swaps.
std::vector<Panel> make_panels(const Stream& stream, const Graph& graph, const Schedule& sched,
                               const Options& options);

nlohmann::json render_json(const Stream& stream, const Schedule& sched);
// render_json(...).dump(2), byte for byte, written as text without the tree (json_text.cpp).
std::string render_json_text(const Stream& stream, const Schedule& sched);
std::string render_text(const Stream& stream, const Schedule& sched);
std::string render_svg(const Stream& stream, const std::vector<Panel>& panels);
nlohmann::json render_trace(const Stream& stream, const std::vector<Panel>& panels);

// "load L1" for an op, "spill w3" / "reload w3" for a swap DMA.
std::string timed_label(const Stream& stream, const Panel& panel, const TimedOp& timed);

}  // namespace ork::sched
