// Trace JSON (trace.h).
#include "lib/exec/trace.h"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace ork::exec {

namespace {

// A name as a JSON string: matmul names come from the model file, so quotes, backslashes and
// control characters are escaped, and bytes that are not UTF-8 become U+FFFD, not a throw.
std::string quoted(const std::string& name) {
  return nlohmann::json(name).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

std::string trace_json(const std::vector<TraceEvent>& events) {
  int64_t origin = events.empty() ? 0 : events.front().begin_ns;
  for (const auto& e : events) origin = std::min(origin, e.begin_ns);
  std::string s = "{\"traceEvents\":[\n";
  s += "{\"ph\":\"M\",\"pid\":1,\"tid\":0,\"name\":\"thread_name\",\"args\":{\"name\":\"compute\"}},\n";
  s += "{\"ph\":\"M\",\"pid\":1,\"tid\":1,\"name\":\"thread_name\",\"args\":{\"name\":\"io\"}}";
  for (const auto& e : events)
    s += fmt::format(",\n{{\"ph\":\"X\",\"pid\":1,\"tid\":{},\"name\":{},\"ts\":{:.3f},\"dur\":{:.3f}}}", e.thread, quoted(e.name),
                     static_cast<double>(e.begin_ns - origin) / 1e3, static_cast<double>(e.end_ns - e.begin_ns) / 1e3);
  s += "\n]}\n";
  return s;
}

}  // namespace ork::exec
