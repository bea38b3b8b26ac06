// ork_bench --host-dtypes: the library's own host time per ork_matmul call for int8, fp16 and
// int4 side by side, on the emulated NPU with a PC that does no work (host_dtypes.cpp).
#pragma once

namespace ork::bench {

int run_host_dtypes(int argc, char** argv);

}  // namespace ork::bench
