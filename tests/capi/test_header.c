/* ork.h as C and as C++: both translation units compile (strict flags) and agree on the
 * layout of every public struct and on the functions' addresses (C linkage in C++). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "ork/ork.h"
#include "tests/capi/header_abi.h"

static void test_c_and_cpp_agree(void** state) {
  (void)state;
  struct HeaderAbi c, cpp;
  header_abi_c(&c);
  header_abi_cpp(&cpp);
  assert_int_equal(c.api_version, 1);
  assert_int_equal(cpp.api_version, c.api_version);
  /* 16 + 16 + 64 + 32 chars, then hw_version, cores, emulated: 128 + 3 * 4 bytes. */
  assert_int_equal(c.info_size, 140);
  assert_int_equal(c.info_cores_offset, 132);
  /* struct_size, cores, mc_cap (12 bytes, API 1) + a_dtype, c_dtype (issue 7). */
  assert_int_equal(c.options_size, 20);
  assert_int_equal(c.options_mc_cap_offset, 8);
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
