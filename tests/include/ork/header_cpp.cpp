// ork.h compiled as C++20 with -Wpedantic -Werror: extern "C" linkage and the same layout
// as in C (test_header compares the two).
#include <cstddef>

#include "ork/ork.h"
#include "tests/include/ork/header_abi.h"

static_assert(sizeof(ork_device_info::backend) == 16, "ork_device_info.backend is char[16]");
static_assert(ORK_OK == 0, "ORK_OK must be 0");

extern "C" void header_abi_cpp(HeaderAbi* out) {
  out->api_version = ORK_API_VERSION;
  out->info_size = sizeof(ork_device_info);
  out->info_cores_offset = offsetof(ork_device_info, cores);
  out->options_size = sizeof(ork_matmul_options);
  out->options_mc_cap_offset = offsetof(ork_matmul_options, mc_cap);
  out->options_core_mask_offset = offsetof(ork_matmul_options, core_mask);
  out->options_stats_offset = offsetof(ork_matmul_options, stats);
  out->stats_size = sizeof(ork_stats);
  out->stats_calls_offset = offsetof(ork_stats, calls);
  out->stats_evictions_offset = offsetof(ork_stats, context_evictions);
  out->stats_emulator_offset = offsetof(ork_stats, emulator_ns);
  out->stats_cpu_threads_offset = offsetof(ork_stats, cpu_threads);
  out->qmatmul_options_size = sizeof(ork_qmatmul_options);
  out->qmatmul_stats_offset = offsetof(ork_qmatmul_options, stats);
  out->memory_size = sizeof(ork_memory_info);
  out->memory_largest_offset = offsetof(ork_memory_info, largest_allocation_bytes);
  out->status_size = sizeof(ork_status);
  // Same addresses as C only if the declarations have C linkage (no mangling).
  out->matmul = reinterpret_cast<void (*)(void)>(&ork_matmul);
  out->open = reinterpret_cast<void (*)(void)>(&ork_device_open);
}
