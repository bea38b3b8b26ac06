/* What one language sees of ork.h, filled by header_c.c (C) and header_cpp.cpp (C++). */
#ifndef ORK_TESTS_INCLUDE_ORK_HEADER_ABI_H
#define ORK_TESTS_INCLUDE_ORK_HEADER_ABI_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct HeaderAbi {
  int api_version;
  size_t info_size, info_cores_offset;
  size_t options_size, options_mc_cap_offset;
  size_t options_core_mask_offset, options_stats_offset; /* API version 2 */
  size_t stats_size, stats_calls_offset, stats_evictions_offset;
  size_t stats_emulator_offset, qmatmul_options_size, qmatmul_stats_offset; /* API version 4 */
  size_t stats_cpu_threads_offset;                                          /* API version 5 */
  size_t memory_size, memory_largest_offset;
  size_t status_size;
  void (*matmul)(void);
  void (*open)(void);
};

void header_abi_c(struct HeaderAbi* out);
void header_abi_cpp(struct HeaderAbi* out);

#ifdef __cplusplus
}
#endif

#endif
