// The CPU time of one thread's work, when asked (RunOptions::count_cpu): while it lives on a
// thread, lib/ref/workers.h's CpuAccounting counts that thread's own clock and the helper
// threads of its run_on_threads calls; at its end the total goes to `*into`, ns. Off, it
// reads no clock (the accounting reads a thread clock per matmul call, a system call the
// plain run does not pay).
#pragma once

#include <cstdint>
#include <optional>

#include "lib/ref/workers.h"

namespace ork::exec {

class CpuClock {
 public:
  CpuClock(bool on, int64_t* into) : into_(on ? into : nullptr) {
    if (into_ == nullptr) return;
    accounting_.emplace();
    start_ = ref::detail::work_cpu_ns();
  }
  ~CpuClock() {
    if (into_ != nullptr) *into_ += ref::detail::work_cpu_ns() - start_;
  }
  CpuClock(const CpuClock&) = delete;
  CpuClock& operator=(const CpuClock&) = delete;

 private:
  int64_t* into_;
  std::optional<ref::detail::CpuAccounting> accounting_;
  int64_t start_ = 0;
};

}  // namespace ork::exec
