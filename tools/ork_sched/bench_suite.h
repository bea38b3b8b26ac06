// The benchmark suite of ork_sched_bench: named streams in groups.
#pragma once

#include <string>
#include <vector>

#include "lib/sched/schedule.h"

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

// A stream of about `ops` ops for the timing runs: decode layers, or a random DAG.
Stream scaling_stream(const std::string& kind, int ops);

}  // namespace ork::sched
