// Trace JSON (trace.h).
#include "lib/exec/trace.h"

#include <algorithm>

#include <fmt/format.h>

namespace ork::exec {

std::string trace_json(const std::vector<TraceEvent>& events) {
  int64_t origin = events.empty() ? 0 : events.front().begin_ns;
  for (const auto& e : events) origin = std::min(origin, e.begin_ns);
  std::string s = "{\"traceEvents\":[\n";
  s += "{\"ph\":\"M\",\"pid\":1,\"tid\":0,\"name\":\"thread_name\",\"args\":{\"name\":\"compute\"}},\n";
  s += "{\"ph\":\"M\",\"pid\":1,\"tid\":1,\"name\":\"thread_name\",\"args\":{\"name\":\"io\"}}";
  for (const auto& e : events)
    s += fmt::format(",\n{{\"ph\":\"X\",\"pid\":1,\"tid\":{},\"name\":\"{}\",\"ts\":{:.3f},\"dur\":{:.3f}}}", e.thread, e.name,
                     static_cast<double>(e.begin_ns - origin) / 1e3, static_cast<double>(e.end_ns - e.begin_ns) / 1e3);
  s += "\n]}\n";
  return s;
}

}  // namespace ork::exec
