// Round timing parameters for the timing-model tests (timing_model_test.cpp, core_sim_test.cpp),
// so every expected time is arithmetic on the model's definition.
#pragma once

#include "driver/timing/timing_model.h"

namespace ork::timing::testing {

inline TimingParams test_params() {
  TimingParams p;
  p.core_dma_bytes_per_ns = 10;
  p.shared_dram_bytes_per_ns = 15;
  p.submit_ns = 30000;
  p.task_ns = 90000;
  p.serial_mac_efficiency = 0.5;
  return p;
}

}  // namespace ork::timing::testing
