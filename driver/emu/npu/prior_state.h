// What a job finds in a core's registers when it starts (ORK_EMU_REGS). A real core keeps
// every register the previous job wrote, whoever ran it (another process's convolution
// through the vendor runtime, a libork job of another shape); only a soft reset clears it.
// - keep (the default, the hardware's behaviour): the register file of the core persists
//   across jobs; resets clear it.
// - adversarial: every job starts, alternately, from a random value in every register, and
//   from the register state a vendor-runtime matmul task leaves (a public capture replayed
//   over random values); which one by (core + job) % 2, so both occur on every core and
//   among the cores' first jobs. A correct command stream writes everything it depends on, so both
//   modes change nothing in a correct result (docs/emulator.md "Register state").
#pragma once

#include <cstdint>

#include "driver/common/result.h"
#include "driver/emu/npu/regfile.h"

namespace ork::emu {

enum class RegisterMode { keep, adversarial };

// ORK_EMU_REGS: unset, "" or "keep" -> keep; "adversarial" -> adversarial; anything else is
// an error naming the variable and the two values.
Result<RegisterMode> register_mode_from_env();

// Random values (splitmix64 of `seed`) in every register.
void fill_random(RegisterFile& regs, uint64_t seed);
// The registers the vendor runtime's matmul task writes, with the values it wrote
// (prior_state.cpp names the capture).
void replay_vendor_task(RegisterFile& regs);
// The state job number `job` of `core` starts from in adversarial mode: random when
// core + job is even, the vendor task over random values when it is odd (core 1's job 0,
// core 0's job 1). Deterministic in (core, job).
void adversarial_state(RegisterFile& regs, int core, uint64_t job);

}  // namespace ork::emu
