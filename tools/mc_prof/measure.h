// mc_prof's measurement: one (shape, cores, mc_cap) configuration run `iters` times after
// `warmup` calls, through the same runner the C API uses, with the host time split the way
// the runner reports it (lib/matmul/context.h RunStats).
#pragma once

#include <cstdint>
#include <string>

#include "driver/common/result.h"

struct ork_device;

namespace ork::tools {

struct Config {
  int64_t m = 512, k = 2048, n = 2048;
  int cores = 1;
  int64_t mc_cap = 0;
  int iters = 20;
  int warmup = 3;
};

// Per matmul, in microseconds: means, and the wall time's min / median / max.
struct Measurement {
  Config config;
  double us_per_matmul = 0;   // wall time of one ork_matmul-equivalent call (mean)
  double us_min = 0, us_median = 0, us_max = 0;  // its spread over the `iters` calls
  double us_per_submit = 0;   // us_per_matmul / submits
  double pack_us = 0;         // A into the native layout + cache sync
  double submit_us = 0;       // submit + wait (includes the emulator's own work off the board)
  double device_us = -1;      // rknpu (and emu over it): the kernel's hw_elapse_time, which the
                              // emulator fills with its timing model; rocket has no such
                              // field: the measured submit + wait wall time
  std::string device_source;  // "kernel" (hw_elapse_time) or "wall" (rocket)
  double unpack_us = 0;       // K-slice accumulation + C unpack
  double lookup_us = 0;       // context lookup on a warm call
  double build_us = 0;        // planning + command building, paid by the first call only
  int submits = 0;            // per matmul
  int64_t tasks = 0;          // per matmul
  int64_t mc = 0;             // rows per M-tile the plan chose
};

// The CPU reference's fast int8 path on the same shape and data, µs per matmul (the
// baseline of `mc_prof --vs-cpu`: the emulator's own compute speed against the host's).
Result<double> cpu_fast_us(const Config& config);

// Runs one configuration on `device` (opened by the caller). Random int8 data, fixed seed.
Result<Measurement> measure(ork_device& device, const Config& config);

}  // namespace ork::tools
