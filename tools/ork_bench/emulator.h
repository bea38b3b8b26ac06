// The emulated NPU as ork_bench candidates: the whole ork_matmul call an inference engine
// makes (pack A, submit to the fake kernel, which runs the regcmd through the modelled
// CNA -> CORE -> DPU, then unpack C), on weights made resident once before the timing.
#pragma once

#include <cstdint>
#include <vector>

#include "tools/ork_bench/baselines.h"

namespace ork::bench {

// emu_rknpu_c1, emu_rknpu_c3, emu_rocket_c3, and emu_rknpu_c3_nocache: a device made with
// ORK_EMU_WEIGHT_CACHE=off (driver/emu/npu/weight_cache.h), so every task gathers and packs
// its weight block again.
std::vector<Candidate> emulator_candidates(int64_t k, int64_t n);

}  // namespace ork::bench
