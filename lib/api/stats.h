// Device facts and statistics (ork.h "Device facts and statistics"; docs/library.md
// "Statistics"): the per-device cumulative counters, one call's accounting, and the memory
// query. Every path that runs a matmul (the sync call today, a queue tomorrow) accounts
// through CallMeter, so the counters are kept in one place.
#pragma once

#include <cstdint>
#include <mutex>

#include "lib/matmul/context.h"
#include "ork/ork.h"

struct ork_device;

namespace ork::api {

// The device's cumulative counters; thread-safe.
class DeviceStats {
 public:
  void add(const ork_stats& call);
  ork_stats snapshot() const;
  void reset();

 private:
  mutable std::mutex mutex_;
  ork_stats total_{};
};

// One call's accounting: construct before the work, fill `run` (NPU backends, from the
// runner) or `host_device_ns` (cpu: the reference multiply; set, it says the host was the
// device), then finish().
class CallMeter {
 public:
  explicit CallMeter(ork_device& device);
  matmul::RunStats run;          // what the runner measured (NPU backends)
  int64_t host_device_ns = -1;   // cpu backend: ns in the reference multiply
  uint64_t cpu_threads = 0;      // cpu backend: host threads the multiply ran on
  uint64_t calls = 1;            // matmuls accounted (a batch's job: all of its matmuls)
  // Adds the call to the device's totals and, when `out` is not null, writes the call's
  // figures to it (struct_size rules). Call only for a call that succeeded.
  ork_status finish(ork_stats* out);

 private:
  ork_device& device_;
  int64_t t0_ns_ = 0;
  uint64_t cache_hits0_ = 0, cache_misses0_ = 0, evictions0_ = 0, chain_ns0_ = 0;
};

// Checks an output struct's struct_size (named `what` in the message: "ork_matmul:
// options.stats"); ORK_OK or ORK_E_INVALID_ARGUMENT.
ork_status check_out_struct(uint32_t struct_size, const char* what);

// ork_device_memory's figures.
ork_memory_info memory_info(const ork_device& device);

// Host bytes held by a cpu-backend device's packed weights (counted in bytes_resident).
void add_host_weight_bytes(ork_device& device, int64_t delta);

}  // namespace ork::api
