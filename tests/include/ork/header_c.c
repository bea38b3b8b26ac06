/* ork.h compiled as C11 with -Wpedantic -Werror (tests/lib/api/meson.build): the public
 * header must be plain C. Reports what C sees, for test_header to compare with C++. */
#include <stddef.h>

#include "ork/ork.h"
#include "tests/include/ork/header_abi.h"

void header_abi_c(struct HeaderAbi* out) {
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
  out->matmul = (void (*)(void))ork_matmul;
  out->open = (void (*)(void))ork_device_open;
}
