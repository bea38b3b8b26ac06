// The emulated NPU as ork_bench candidates: the whole ork_matmul call an inference engine
// makes (pack A, submit to the fake kernel, which runs the regcmd through the modelled
// CNA -> CORE -> DPU, then unpack C), on weights made resident once before the timing.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tools/ork_bench/baselines.h"

namespace ork::bench {

// emu_rknpu_c1 and emu_rknpu_c3; with `all`, also emu_rocket_c3 and emu_rknpu_c3_nocache: a
// device made with ORK_EMU_WEIGHT_CACHE=off (driver/emu/npu/weight_cache.h), so every task
// gathers and packs its weight block again. Each candidate has a device and BOs of its own
// (tens of MiB at M = 512, K = N = 2048): the more of them run round-robin, the more each
// finds its memory evicted by the others, which is why the extra two are asked for.
// With `device` (--device): that device alone, as <device>_c1 and <device>_all (emu names
// keep their emu_ prefix, e.g. emu_rocket_c1; a real NPU is npu_rknpu_c1).
std::vector<Candidate> emulator_candidates(int64_t k, int64_t n, bool all, const std::string& device = "");

}  // namespace ork::bench
