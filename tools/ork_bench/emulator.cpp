// Emulated-NPU candidates (emulator.h), through the public C API.
#include "tools/ork_bench/emulator.h"

#include <fmt/core.h>

#include <cstdlib>
#include <memory>
#include <string>

#include "ork/ork.h"
#include "tools/common/ork_handles.h"

namespace ork::bench {
namespace {

// One device and its resident weights, made on the first call (from that call's B: every
// call of a run passes the same B) and closed with the candidate.
struct EmuState {
  tools::DevicePtr device;
  tools::WeightsPtr weights;  // declared last: destroyed first
};

Candidate emu_candidate(const std::string& name, const std::string& device, int cores, bool no_cache, int64_t k,
                        int64_t n) {
  auto state = std::make_shared<EmuState>();
  return {name, [=](std::span<const int8_t> a, std::span<const int8_t> b, std::span<int32_t> c, std::string& error) {
            const auto fail = [&](const char* what) {
              error = fmt::format("{}: {}", what, ork_last_error());
              return false;
            };
            if (!state->device) {
              // The no-cache device's kernel is made without the weight cache; the others keep theirs.
              if (no_cache) setenv("ORK_EMU_WEIGHT_CACHE", "off", 1);
              ork_device* d = nullptr;
              const ork_status st = ork_device_open(device.c_str(), &d);
              if (no_cache) unsetenv("ORK_EMU_WEIGHT_CACHE");
              if (st != ORK_OK) return fail("ork_device_open");
              state->device.reset(d);
            }
            if (!state->weights) {
              ork_weights* w = nullptr;
              if (ork_weights_create(state->device.get(), ORK_DTYPE_INT8, k, n, b.data(), &w) != ORK_OK)
                return fail("ork_weights_create");
              state->weights.reset(w);
            }
            ork_matmul_options o{};
            o.struct_size = sizeof o;
            o.cores = cores;
            const auto m = static_cast<int64_t>(a.size()) / k;
            if (ork_matmul(state->device.get(), state->weights.get(), a.data(), m, c.data(), &o) != ORK_OK) return fail("ork_matmul");
            return true;
          }};
}

}  // namespace

std::vector<Candidate> emulator_candidates(int64_t k, int64_t n, bool all, const std::string& device) {
  if (!device.empty()) {  // --device: this device alone, 1 core and all it has (0)
    std::string id = device;
    for (char& ch : id) ch = (ch == '-' || ch == ':' || ch == '/') ? '_' : ch;
    const std::string name = (device.starts_with("emu") ? "" : "npu_") + id;
    return {emu_candidate(name + "_c1", device, 1, false, k, n), emu_candidate(name + "_all", device, 0, false, k, n)};
  }
  std::vector<Candidate> out{emu_candidate("emu_rknpu_c1", "emu-rknpu", 1, false, k, n),
                             emu_candidate("emu_rknpu_c3", "emu-rknpu", 3, false, k, n)};
  if (all) {
    out.push_back(emu_candidate("emu_rocket_c3", "emu-rocket", 3, false, k, n));
    out.push_back(emu_candidate("emu_rknpu_c3_nocache", "emu-rknpu", 3, true, k, n));
  }
  return out;
}

}  // namespace ork::bench
