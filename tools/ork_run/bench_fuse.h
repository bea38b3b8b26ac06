// ork_run --bench-fuse (docs/execution.md "Fused groups"): the executor running one packed
// model fused (PlanOptions::fuse, the default) and unfused (--no-fuse) side by side in one
// run, the two interleaved in every round (which goes first alternating), on two devices:
// the zero-work emulator (every job completes at once and computes nothing, so a run costs
// the host's work only) and the emulated NPU computing (--device). Each way runs twice a
// round, one token and --tokens, and the difference per token past the first is kept, so
// the run's setup, the weights' one read (a resident budget) and the first token's context
// builds cancel. Reports, min / median / max over the rounds, that per-token CPU time of the
// executor's device thread (RunStats::device_cpu_ns: plan lookups, making and packing A, the
// submits, unpacking and routing C, the activations; its helper threads included, the
// reader not) and its time in matmul calls (RunStats::device_ns: launch to completion, wall),
// and the ratios fused / unfused of each round. The computing device's runs are all checked
// against the CPU reference; the zero-work runs compute nothing and say so.
#pragma once

#include "tools/ork_run/bench.h"

namespace ork::tools {

// The run's shape and options as --bench-orders takes them (bench.h; io_rate unused).
int run_bench_fuse(const BenchArgs& args);

}  // namespace ork::tools
