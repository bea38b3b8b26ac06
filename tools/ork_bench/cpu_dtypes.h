// ork_bench --cpu-dtypes: the cpu device's multiply per dtype and quantised mode, through the
// C API as an engine calls it, against the machine's measured peaks in one run: int8 (and
// int4, and the quantised modes, which run the int8 kernel) against the VPDPBUSD peak, fp16
// against the fp32 FMA peak (cpu_dtypes.cpp; docs/cpu-reference.md).
#pragma once

namespace ork::bench {

int run_cpu_dtypes(int argc, char** argv);

}  // namespace ork::bench
