// ork_bench --decode (decode.cpp): a model's decode loop against one layer's, per call.
#pragma once

namespace ork::bench {

// Parses its own options (argv holds --decode); exit code 0, 1 (a device failed or a result
// differed from the oracle) or 2 (bad usage).
int run_decode(int argc, char** argv);

}  // namespace ork::bench
