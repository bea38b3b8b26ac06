// Fault rules for the fake kernel, and their text form, ORK_EMU_FAULTS (docs/emulator.md
// "Injected faults"): tools, tests-hw and any program can inject the faults that tests set
// through FakeKernel::faults() in C++. The grammar is parsed strictly: a typo is an error
// naming the rule and what is accepted, never a silently healthy device.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "driver/common/result.h"

namespace ork::emu {

// Where a rule fires. The call points match both uAPIs' ioctls that do the same thing.
enum class FaultPoint {
  ioctl,    // every ioctl
  submit,   // RKNPU_SUBMIT, ROCKET_SUBMIT
  create,   // RKNPU_MEM_CREATE, ROCKET_CREATE_BO
  map,      // RKNPU_MEM_MAP (rocket hands out the mmap offset at CREATE_BO)
  sync,     // RKNPU_MEM_SYNC, ROCKET_PREP_BO, ROCKET_FINI_BO
  destroy,  // RKNPU_MEM_DESTROY, DRM GEM_CLOSE
  action,   // RKNPU_ACTION
  mmap,     // mmap() of a BO
  job,      // a core's chain (one per core and submit on rknpu, one per task on rocket)
  device,   // the device node itself
  open,     // open() of an emulated node (counted by no other point: an "ioctl" rule never
            // fails an open, so existing specs behave as before)
};

enum class JobFault {
  none,
  wedge,  // never completes: the wait times out, the kernel resets the core
  dma,    // raises DMA_READ_ERROR (interrupt status bit 12)
  stray,  // its first task's output address is moved outside every BO: a real DMA fault
};

struct FaultRule {
  FaultPoint point = FaultPoint::ioctl;
  int err = 0;                     // call points: the errno returned
  JobFault job = JobFault::none;   // point job
  bool gone = false;               // point device: the node vanishes (ENODEV from then on)
  int skip = 0;                    // matching events let through first ("@N": N - 1)
  int count = 1;                   // then this many fire; -1 = every one after
  std::string text;                // the rule as written, for logs
};

// "submit:eio@3,ioctl:eintr x40,job:wedge" -> rules. Grammar (docs/emulator.md):
//   spec  = rule { "," rule }
//   rule  = point ":" what [ "@" N ] [ "x" COUNT | "x*" ]
//   point = ioctl | submit | create | map | sync | destroy | action | mmap   what = errno name
//         | open | job (what = wedge | dma | stray) | device (what = gone)
// errno names: eintr eagain eio enomem enospc enodev eperm eacces einval ebusy etimedout efault.
// N >= 1 is the matching event that fires first (default 1), COUNT >= 1 how many in a row
// (default 1), "x*" all from N on. Spaces around tokens are allowed.
Result<std::vector<FaultRule>> parse_fault_spec(std::string_view spec);

// The rules of $ORK_EMU_FAULTS; none when unset or empty; an error naming the variable.
Result<std::vector<FaultRule>> faults_from_env();

}  // namespace ork::emu
