/* ork.h as C and as C++: both translation units compile (strict flags) and agree on the
 * layout of every public struct and on the functions' addresses (C linkage in C++). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "ork/ork.h"
#include "tests/include/ork/header_abi.h"

static void test_c_and_cpp_agree(void** state) {
  (void)state;
  struct HeaderAbi c, cpp;
  header_abi_c(&c);
  header_abi_cpp(&cpp);
  assert_int_equal(c.api_version, 6);
  assert_int_equal(cpp.api_version, c.api_version);
  /* 16 + 16 + 64 + 32 chars, then hw_version, cores, emulated: 128 + 3 * 4 bytes. */
  assert_int_equal(c.info_size, 140);
  assert_int_equal(c.info_cores_offset, 132);
  /* struct_size, cores, mc_cap (12 bytes, API version 1 as first released) + a_dtype, c_dtype (added within version 1). */
  /* + core_mask (uint32) and the stats pointer (API 2), appended: older callers keep theirs. */
  assert_int_equal(c.options_size, 32);
  assert_int_equal(c.options_mc_cap_offset, 8);
  assert_int_equal(c.options_core_mask_offset, 20);
  assert_int_equal(c.options_stats_offset, 24);
  /* struct_size + reserved, then 19 uint64 counters (emulator_ns appended in API 4,
   * cpu_threads in API 5); memory: header + 8 uint64 figures. */
  assert_int_equal(c.stats_size, 160);
  assert_int_equal(c.stats_emulator_offset, 144);
  assert_int_equal(c.stats_cpu_threads_offset, 152);
  assert_int_equal(cpp.stats_cpu_threads_offset, c.stats_cpu_threads_offset);
  /* struct_size, activation_bits, per_row, cores (16 bytes, API 1), then the stats pointer. */
  assert_int_equal(c.qmatmul_options_size, 24);
  assert_int_equal(c.qmatmul_stats_offset, 16);
  assert_int_equal(cpp.stats_emulator_offset, c.stats_emulator_offset);
  assert_int_equal(cpp.qmatmul_options_size, c.qmatmul_options_size);
  assert_int_equal(cpp.qmatmul_stats_offset, c.qmatmul_stats_offset);
  assert_int_equal(c.stats_calls_offset, 8);
  assert_int_equal(c.stats_evictions_offset, 136);
  assert_int_equal(c.memory_size, 72);
  assert_int_equal(c.memory_largest_offset, 24);
  assert_int_equal(cpp.options_core_mask_offset, c.options_core_mask_offset);
  assert_int_equal(cpp.options_stats_offset, c.options_stats_offset);
  assert_int_equal(cpp.stats_size, c.stats_size);
  assert_int_equal(cpp.stats_calls_offset, c.stats_calls_offset);
  assert_int_equal(cpp.stats_evictions_offset, c.stats_evictions_offset);
  assert_int_equal(cpp.memory_size, c.memory_size);
  assert_int_equal(cpp.memory_largest_offset, c.memory_largest_offset);
  assert_int_equal(cpp.info_size, c.info_size);
  assert_int_equal(cpp.info_cores_offset, c.info_cores_offset);
  assert_int_equal(cpp.options_size, c.options_size);
  assert_int_equal(cpp.options_mc_cap_offset, c.options_mc_cap_offset);
  assert_int_equal(cpp.status_size, c.status_size);
  assert_ptr_equal(cpp.matmul, c.matmul);
  assert_ptr_equal(cpp.open, c.open);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_c_and_cpp_agree)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
