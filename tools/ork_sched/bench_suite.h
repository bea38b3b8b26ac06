// The benchmark suite of ork_sched_bench: named streams in groups.
#pragma once

#include <string>
#include <vector>

#include "lib/sched/chooser.h"

namespace ork::sched {

struct BenchCase {
  std::string group;  // "seed", "decode", "random"
  std::string name;
  Stream stream;
  Options options;    // urgent_starts etc. for the case (policy set by the bench)
};

// Seed examples from `examples_dir` (skipped when unreadable), transformer-decode streams,
// and `random_count` random DAGs.
std::vector<BenchCase> bench_suite(const std::string& examples_dir, int random_count);

// A stream of about `ops` ops for the timing runs: "decode" layers, a "random" DAG, or "7b":
// the stream lib/exec's plan builds for decode tokens of a 7B model (ork_pack --synthetic 7b's
// shapes: 28 layers, hidden 3584, intermediate 18944, k/v 512; int8; a 1 GiB budget), as many
// tokens as make `ops` (588 ops a token).
Stream scaling_stream(const std::string& kind, int ops);

// What `ork_run MODEL --plan-out FILE --plan-only` does for that 7B model at about `ops` ops,
// less reading the file's tensor table: the plan built in the scheduled order (the chooser
// under slots, lib/exec/plan.cpp) and its text (lib/exec/plan_text.h). The text's size in
// bytes, or the error.
Result<size_t> seven_b_plan_only(int ops);

// The held-out mix: streams the heuristics were not tuned on, from `seed` (the tuning suite
// above uses seeds 1000..1000+random_count). Three in four are random DAGs with parameters
// drawn from the seed (programs, cores, memory, outstanding programs, buffer sizes), one in
// four transformer decode streams with drawn tiles, memory, cores and compute share. Streams
// whose input order cannot run are left out (the schedule is an error for them).
std::vector<BenchCase> heldout_suite(uint64_t seed, int count);

// True when some access of the stream covers only part of its buffer (a byte range).
bool has_ranges(const Stream& stream);

}  // namespace ork::sched
