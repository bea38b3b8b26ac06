// ork_info --stats (info_stats.h): a short workload on a device, then its statistics and memory
// figures as JSON, so what the counters measure can be seen on any machine.
#include "tools/ork_info/info_stats.h"

#include <fmt/format.h>

#include <vector>

#include "lib/ref/oracle.h"
#include "lib/ref/random.h"
#include "tools/common/ork_handles.h"
#include "tools/common/stats_json.h"

namespace ork::tools {

nlohmann::json stats_report(const std::string& name, int calls, bool* ok) {
  nlohmann::json j = {{"name", name}};
  *ok = false;
  ork_device* raw = nullptr;
  if (ork_status st = ork_device_open(name == "default" ? nullptr : name.c_str(), &raw); st != ORK_OK) {
    j["error"] = describe_failure(st);
    return j;
  }
  DevicePtr device(raw);
  // Decode-shaped work: M = 1 on two weights (1024 x 1024 and 1024 x 4096), alternating.
  constexpr int64_t K = 1024;
  const int64_t widths[2] = {1024, 4096};
  std::vector<std::vector<int8_t>> w;
  std::vector<WeightsPtr> handles;
  for (int i = 0; i < 2; ++i) {
    w.push_back(ref::random_int8(static_cast<size_t>(K * widths[i]), 40 + static_cast<uint32_t>(i)));
    ork_weights* h = nullptr;
    if (ork_status st = ork_weights_create(device.get(), ORK_DTYPE_INT8, K, widths[i], w.back().data(), &h); st != ORK_OK) {
      j["error"] = describe_failure(st);
      return j;
    }
    handles.emplace_back(h);
  }
  const auto a = ref::random_int8(K, 7);
  bool exact = true;
  for (int i = 0; i < calls; ++i) {
    const int which = i % 2;
    std::vector<int32_t> c(static_cast<size_t>(widths[which])), want(c.size());
    if (ork_status st = ork_matmul(device.get(), handles[which].get(), a.data(), 1, c.data(), nullptr); st != ORK_OK) {
      j["error"] = describe_failure(st);
      return j;
    }
    exact &= ref::matmul_int8(a, w[which], want, {1, K, widths[which]}).ok() && c == want;
  }
  ork_stats s{};
  s.struct_size = sizeof s;
  ork_memory_info m{};
  m.struct_size = sizeof m;
  if (ork_status st = ork_device_get_stats(device.get(), &s); st != ORK_OK) {
    j["error"] = describe_failure(st);
    return j;
  }
  if (ork_status st = ork_device_memory(device.get(), &m); st != ORK_OK) {
    j["error"] = describe_failure(st);
    return j;
  }
  j["workload"] = {{"calls", calls}, {"m", 1}, {"k", K}, {"n", {widths[0], widths[1]}}, {"exact", exact}};
  j["stats"] = stats_json(s);
  j["memory"] = memory_json(m);
  *ok = exact;
  return j;
}

}  // namespace ork::tools
