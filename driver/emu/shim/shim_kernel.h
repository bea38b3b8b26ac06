// The fake kernel the LD_PRELOAD shim serves: one process-wide instance (default config and
// a display card0, shim.cpp),
// the one NPU of the machine the shim pretends to be, made on first use. Only the shim has
// it: lib/api's "emu" devices each own a kernel of their own (docs/README.md "State").
#pragma once

#include "driver/emu/kernel/fake_kernel.h"

namespace ork::emu {

FakeKernel& shared_fake_kernel();

}  // namespace ork::emu
