// ork_info: which libork devices and backends open on this machine, and what they are.
// Tries every backend name (or the one given), prints what opened and, for what failed,
// the status and libork's message. Exit 0 when a device opened, 1 when none did, 2 on bad
// usage. --stats: a short workload per device, then its statistics as JSON (info_stats.h).
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "driver/common/echo.h"
#include "driver/emu/npu/timeline.h"
#include "tools/common/cli.h"
#include "tools/common/ork_handles.h"
#include "tools/ork_info/info_stats.h"

namespace ork::tools {
namespace {

// Every backend name the C API knows (ork.h), real drivers first.
const std::vector<std::string> kBackendNames = {"rknpu", "rocket", "emu-rknpu", "emu-rocket",
                                                "cpu"};

struct Probe {
  std::string name;  // as passed to ork_device_open ("default" = NULL)
  ork_status status = ORK_OK;
  std::string error;
  ork_device_info info{};
};

Probe probe(const std::string& name) {
  Probe p{name};
  ork_device* raw = nullptr;
  p.status = ork_device_open(name == "default" ? nullptr : name.c_str(), &raw);
  DevicePtr device(raw);
  if (p.status != ORK_OK) {
    p.error = describe_failure(p.status);
    return p;
  }
  p.status = ork_device_get_info(device.get(), &p.info);
  if (p.status != ORK_OK) p.error = describe_failure(p.status);
  return p;
}

// The emulated NPU's timing mode, read by libork's own reader (the one it opens an emu
// device with, docs/timing-model.md), so the report cannot disagree with the device. A bad
// value fails the device's open, so an opened emu device never sees one.
std::string emu_timing() { return ork::emu::timing_name_from_env(); }

nlohmann::json to_json(const Probe& p) {
  nlohmann::json j = {{"name", ork::echo_capped(p.name)}, {"opened", p.status == ORK_OK},
                      {"status", status_name(p.status)}};
  if (p.status != ORK_OK) {
    j["error"] = p.error;
    return j;
  }
  j["backend"] = p.info.backend;
  j["kernel_interface"] = p.info.kernel_interface;
  j["node"] = p.info.node;
  j["driver_version"] = p.info.driver_version;
  j["hw_version"] = p.info.hw_version;
  j["cores"] = p.info.cores;
  j["emulated"] = p.info.emulated != 0;
  if (p.info.emulated) j["timing"] = emu_timing();
  return j;
}

std::string describe_info(const ork_device_info& i) {
  std::string s = fmt::format("backend {}, {} core{}", i.backend, i.cores, i.cores == 1 ? "" : "s");
  if (i.kernel_interface[0]) s += fmt::format(", interface {}", i.kernel_interface);
  if (i.node[0]) s += fmt::format(", node {}", i.node);
  if (i.driver_version[0]) s += fmt::format(", driver {}", i.driver_version);
  if (i.hw_version) s += fmt::format(", hw 0x{:08x}", i.hw_version);
  if (i.emulated) s += fmt::format(" (emulated, timing {})", emu_timing());
  return s;
}

void print_text(const std::vector<Probe>& probes, const char* env_device) {
  fmt::print("libork {} (C API {})\n", ork_version(), ORK_API_VERSION);
  fmt::print("default device: {}\n",
             env_device ? fmt::format("ORK_DEVICE={}", env_device) : "auto (ORK_DEVICE unset)");
  for (const Probe& p : probes) {
    if (p.status == ORK_OK)
      fmt::print("  {:<11} opened  {}\n", ork::echo_capped(p.name), describe_info(p.info));
    else
      fmt::print("  {:<11} failed  {}\n", ork::echo_capped(p.name), p.error);
  }
}

int run(int argc, char** argv) {
  CLI::App app{"ork_info: the libork devices and backends found on this machine.\n"
               "Tries rknpu, rocket, emu-rknpu, emu-rocket, cpu and the default device.\n"
               "Exit 0 when a device opened, 2 on bad usage (or an unknown --device name), 3 when none did\n"
               "(device unavailable)."};
  add_conventions(app, "ork_info");
  std::string device;
  bool as_json = false;
  add_device(app, device, "; given: probe only this device");
  add_json(app, as_json);
  bool stats = false;
  int stats_calls = 8;
  app.add_flag("--stats", stats,
               "run a short decode-shaped workload on each device that opens and print its statistics and memory "
               "figures as JSON (ork_device_get_stats, ork_device_memory)");
  add_number(app, "--stats-calls", stats_calls, "matmuls of the --stats workload", 1, 100000);
  if (int rc = parse_command_line(app, argc, argv); rc >= 0) return rc;
  if (stats) {
    std::vector<std::string> names = device.empty() ? std::vector<std::string>{"emu-rknpu", "emu-rocket", "cpu"}
                                                    : std::vector<std::string>{device};
    nlohmann::json out = {{"version", ork_version()}, {"api_version", ORK_API_VERSION}, {"devices", nlohmann::json::array()}};
    bool all_ok = true;
    for (const std::string& name : names) {
      bool ok = false;
      out["devices"].push_back(stats_report(name, stats_calls, &ok));
      all_ok &= ok;
    }
    fmt::print("{}\n", out.dump(2));
    return code(all_ok ? Exit::ok : Exit::check_failed);
  }

  std::vector<Probe> probes;
  if (!device.empty()) {
    probes.push_back(probe(device));
  } else {
    for (const std::string& name : kBackendNames) probes.push_back(probe(name));
    probes.push_back(probe("default"));
  }
  const char* env_device = std::getenv("ORK_DEVICE");
  bool any_opened = false;
  for (const Probe& p : probes) any_opened |= p.status == ORK_OK;

  if (as_json) {
    nlohmann::json out = {{"version", ork_version()},
                          {"api_version", ORK_API_VERSION},
                          {"ork_device_env", env_device ? nlohmann::json(env_device)
                                                        : nlohmann::json(nullptr)},
                          {"devices", nlohmann::json::array()}};
    for (const Probe& p : probes) out["devices"].push_back(to_json(p));
    fmt::print("{}\n", out.dump(2));
  } else {
    print_text(probes, env_device);
  }
  // A name the library does not know is bad usage; a known device that is not there is 3.
  if (!device.empty() && probes[0].status == ORK_E_INVALID_ARGUMENT) return code(Exit::bad_usage);
  return code(any_opened ? Exit::ok : Exit::device_unavailable);
}

}  // namespace
}  // namespace ork::tools

int main(int argc, char** argv) {
  return ork::tools::run_main("ork_info", [&] { return ork::tools::run(argc, argv); });
}
