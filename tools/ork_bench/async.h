// ork_bench --async (async.cpp): asynchronous jobs and batch replay against blocking calls.
#pragma once

namespace ork::bench {

// Parses its own options (argv holds --async); exit code 0, 1 (a device failed or a result
// differed from the oracle) or 2 (bad usage).
int run_async(int argc, char** argv);

}  // namespace ork::bench
