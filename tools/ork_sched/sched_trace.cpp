// Perfetto / Chrome trace JSON (the "Trace Event Format"): one process per panel, one
// thread for the DMA engine and one per core, a counter for live bytes. 1 cycle = 1 us.
#include "tools/ork_sched/render.h"

namespace ork::sched {

namespace {

nlohmann::json name_event(const char* what, int pid, int tid, const std::string& name) {
  return {{"ph", "M"}, {"name", what}, {"pid", pid}, {"tid", tid}, {"args", {{"name", name}}}};
}

}  // namespace

nlohmann::json render_trace(const Stream& s, const std::vector<Panel>& panels) {
  nlohmann::json events = nlohmann::json::array();
  for (size_t i = 0; i < panels.size(); ++i) {
    const Panel& p = panels[i];
    const int pid = static_cast<int>(i) + 1;
    events.push_back(name_event("process_name", pid, 0, p.title + " (" + std::to_string(p.sim.makespan) + " cycles)"));
    events.push_back(name_event("thread_name", pid, 0, "DMA"));
    for (int c = 0; c < s.cores; ++c) events.push_back(name_event("thread_name", pid, c + 1, "core " + std::to_string(c)));
    for (const TimedOp& t : p.sim.timeline) {
      const bool dma = t.op < 0 || s.ops[t.op].kind == OpKind::load || s.ops[t.op].kind == OpKind::store;
      if (!dma && t.core < 0) continue;  // waits and barriers live on the stream only
      events.push_back({{"ph", "X"}, {"name", timed_label(s, p, t)}, {"pid", pid},
                        {"tid", dma ? 0 : t.core + 1}, {"ts", t.begin}, {"dur", t.end - t.begin}});
    }
    for (const LivePoint& l : p.sim.live)
      events.push_back({{"ph", "C"}, {"name", "live bytes"}, {"pid", pid}, {"ts", l.time},
                        {"args", {{"bytes", l.bytes}}}});
  }
  return {{"traceEvents", events}, {"displayTimeUnit", "ns"}};
}

}  // namespace ork::sched
