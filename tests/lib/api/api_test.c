/* The C API's contract on bad input and on devices (include/ork/ork.h): every NULL pointer
 * and bad argument gets its status and a message naming the argument; every backend that
 * must work off the board opens and closes; ORK_DEVICE overrides the default. */
#define _POSIX_C_SOURCE 200809L /* setenv, unsetenv */

#include <stdlib.h>
#include <string.h>

#include "tests/lib/api/capi_helpers.h"

static void test_version_and_status_strings(void** state) {
  (void)state;
  assert_non_null(ork_version());
  assert_true(strlen(ork_version()) > 0);
  const ork_status all[] = {ORK_OK, ORK_E_INVALID_ARGUMENT, ORK_E_UNSUPPORTED, ORK_E_NO_DEVICE,
                            ORK_E_NO_MEMORY, ORK_E_DEVICE, ORK_E_TIMEOUT};
  for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); ++i) {
    assert_non_null(ork_status_string(all[i]));
    assert_true(strlen(ork_status_string(all[i])) > 0);
    for (size_t j = 0; j < i; ++j) assert_string_not_equal(ork_status_string(all[i]),
                                                           ork_status_string(all[j]));
  }
  assert_non_null(ork_status_string((ork_status)99));
  assert_non_null(ork_last_error());
}

static void test_open_rejects_null_out_and_unknown_names(void** state) {
  (void)state;
  expect_error(ork_device_open("emu", NULL), ORK_E_INVALID_ARGUMENT, "out");
  ork_device* device = (ork_device*)&device; /* must be reset to NULL on failure */
  expect_error(ork_device_open("nosuch", &device), ORK_E_INVALID_ARGUMENT, "nosuch");
  assert_null(device);
  expect_error(ork_device_open("EMU", &device), ORK_E_INVALID_ARGUMENT, "EMU");
  expect_error(ork_device_open("emu-", &device), ORK_E_INVALID_ARGUMENT, "emu-");
  /* "" is not NULL (never the default), a ":NODE" only where there is a node, and a name of
   * any size echoed at most 200 bytes. */
  expect_error(ork_device_open("", &device), ORK_E_INVALID_ARGUMENT, "empty");
  assert_null(device);
  expect_error(ork_device_open("emu:foo", &device), ORK_E_INVALID_ARGUMENT, "emu:foo");
  expect_error(ork_device_open("cpu:x", &device), ORK_E_INVALID_ARGUMENT, "only rknpu, rocket and auto take a :NODE");
  expect_error(ork_device_open("rknpu:", &device), ORK_E_INVALID_ARGUMENT, "empty :NODE");
  assert_null(device);
  enum { kLong = 100000 };
  char* huge = malloc(kLong + 1);
  assert_non_null(huge);
  memset(huge, 'x', kLong);
  huge[kLong] = '\0';
  expect_error(ork_device_open(huge, &device), ORK_E_INVALID_ARGUMENT, "(100000 bytes)");
  assert_true(strlen(ork_last_error()) < 400);
  free(huge);
  ork_device_close(NULL); /* no-op, like free(NULL) */
}

static void check_info(const char* name, const char* backend, const char* interface,
                       int32_t cores, int32_t emulated) {
  ork_device* device = open_or_fail(name);
  ork_device_info info;
  memset(&info, 0x7F, sizeof(info)); /* every field must be written */
  assert_int_equal(ork_device_get_info(device, &info), ORK_OK);
  assert_string_equal(info.backend, backend);
  assert_string_equal(info.kernel_interface, interface);
  assert_int_equal(info.cores, cores);
  assert_int_equal(info.emulated, emulated);
  assert_true(memchr(info.node, '\0', sizeof(info.node)) != NULL);
  assert_true(memchr(info.driver_version, '\0', sizeof(info.driver_version)) != NULL);
  if (strcmp(backend, "cpu") == 0) {
    assert_string_equal(info.node, "");
    assert_string_equal(info.driver_version, "");
  } else {
    assert_true(strlen(info.node) > 0);           /* the emulated node path */
    assert_true(strlen(info.driver_version) > 0); /* what the fake kernel reports */
  }
  ork_device_close(device);
}

static void test_off_board_backends_open_with_their_info(void** state) {
  (void)state;
  unsetenv("ORK_DEVICE");
  check_info("emu", "emu", "rknpu", 3, 1);
  check_info("emu-rknpu", "emu", "rknpu", 3, 1);
  check_info("emu-rocket", "emu", "rocket", 3, 1);
  check_info("cpu", "cpu", "", 3, 0); /* cores 1..3 as host threads */
}

/* "auto" (and NULL, "default") is the first real NPU interface whose node exists here
 * (rknpu before rocket), else the emulator. Off the board that is emu; under the shim
 * (test_capi_args_shim) the shim's rknpu card node; on a board the board's. */
static void test_auto_is_the_first_npu_here(void** state) {
  (void)state;
  unsetenv("ORK_DEVICE");
  char node[300];
  int emulated = 0;
  const char* names[] = {"auto", NULL, "default"};
  for (int i = 0; i < 3; ++i) {
    if (npu_node("rknpu", node, sizeof node, &emulated)) {
      check_info(names[i], "rknpu", "rknpu", 3, emulated);
    } else if (npu_node("rocket", node, sizeof node, &emulated)) {
      check_info(names[i], "rocket", "rocket", 3, emulated);
    } else {
      check_info(names[i], "emu", "rknpu", 3, 1);
    }
  }
}

/* rknpu and rocket open exactly the node the independent scan finds (npu_node), or report
 * ORK_E_NO_DEVICE naming the interface when there is none. */
static void test_real_drivers_open_the_node_here(void** state) {
  (void)state;
  const char* names[] = {"rknpu", "rocket"};
  for (int i = 0; i < 2; ++i) {
    char node[300];
    int emulated = 0;
    ork_device* device = (ork_device*)&device;
    const ork_status st = ork_device_open(names[i], &device);
    if (!npu_node(names[i], node, sizeof node, &emulated)) {
      expect_error(st, ORK_E_NO_DEVICE, names[i]);
      assert_null(device);
      continue;
    }
    if (st != ORK_OK) print_error("open %s: %s\n", names[i], ork_last_error());
    assert_int_equal(st, ORK_OK);
    ork_device_info info;
    assert_int_equal(ork_device_get_info(device, &info), ORK_OK);
    assert_string_equal(info.backend, names[i]);
    assert_string_equal(info.node, node);
    assert_int_equal(info.emulated, emulated);
    ork_device_close(device);
  }
}

static void test_ork_device_overrides_the_default(void** state) {
  (void)state;
  setenv("ORK_DEVICE", "cpu", 1);
  check_info(NULL, "cpu", "", 3, 0);
  check_info("default", "cpu", "", 3, 0);
  check_info("emu", "emu", "rknpu", 3, 1); /* an explicit name wins over the variable */
  setenv("ORK_DEVICE", "emu-rocket", 1);
  check_info(NULL, "emu", "rocket", 3, 1);
  setenv("ORK_DEVICE", "bogus-device", 1);
  ork_device* device = NULL;
  expect_error(ork_device_open(NULL, &device), ORK_E_INVALID_ARGUMENT, "bogus-device");
  assert_null(device);
  unsetenv("ORK_DEVICE");
}

static void test_get_info_rejects_null(void** state) {
  (void)state;
  ork_device_info info;
  expect_error(ork_device_get_info(NULL, &info), ORK_E_INVALID_ARGUMENT, "device");
  ork_device* device = open_or_fail("cpu");
  expect_error(ork_device_get_info(device, NULL), ORK_E_INVALID_ARGUMENT, "info");
  ork_device_close(device);
}

static void test_weights_create_rejects_bad_arguments(void** state) {
  (void)state;
  ork_device* device = open_or_fail("emu");
  int8_t data[32 * 32] = {0};
  ork_weights* w = (ork_weights*)&w;
  expect_error(ork_weights_create(device, ORK_DTYPE_INT8, 32, 32, data, NULL),
               ORK_E_INVALID_ARGUMENT, "out");
  expect_error(ork_weights_create(NULL, ORK_DTYPE_INT8, 32, 32, data, &w),
               ORK_E_INVALID_ARGUMENT, "device");
  assert_null(w);
  expect_error(ork_weights_create(device, ORK_DTYPE_INT8, 32, 32, NULL, &w),
               ORK_E_INVALID_ARGUMENT, "data");
  expect_error(ork_weights_create(device, ORK_DTYPE_INT8, 0, 32, data, &w),
               ORK_E_INVALID_ARGUMENT, "K");
  expect_error(ork_weights_create(device, ORK_DTYPE_INT8, -5, 32, data, &w),
               ORK_E_INVALID_ARGUMENT, "K");
  expect_error(ork_weights_create(device, ORK_DTYPE_INT8, 32, 0, data, &w),
               ORK_E_INVALID_ARGUMENT, "N");
  expect_error(ork_weights_create(device, ORK_DTYPE_INT8, INT64_MAX, 32, data, &w),
               ORK_E_INVALID_ARGUMENT, "K");
  expect_error(ork_weights_create(device, (ork_dtype)99, 32, 32, data, &w),
               ORK_E_INVALID_ARGUMENT, "dtype");
  expect_error(ork_weights_create(device, ORK_DTYPE_INT32, 32, 32, data, &w),
               ORK_E_INVALID_ARGUMENT, "dtype"); /* output-only dtype */
  assert_null(w);
  ork_weights_destroy(NULL); /* no-op */
  check_matmul(device, 3, 32, 32, NULL, 1); /* still usable after every error above */
  ork_device_close(device);
}

static void test_matmul_rejects_bad_arguments(void** state) {
  (void)state;
  ork_device* device = open_or_fail("emu");
  ork_device* other = open_or_fail("emu");
  int8_t wdata[64 * 32];
  fill_int8(wdata, sizeof(wdata), 3);
  ork_weights* w = NULL;
  ork_weights* w_other = NULL;
  assert_int_equal(ork_weights_create(device, ORK_DTYPE_INT8, 64, 32, wdata, &w), ORK_OK);
  assert_int_equal(ork_weights_create(other, ORK_DTYPE_INT8, 64, 32, wdata, &w_other), ORK_OK);
  int8_t a[4 * 64] = {0};
  int32_t c[4 * 32];
  expect_error(ork_matmul(NULL, w, a, 4, c, NULL), ORK_E_INVALID_ARGUMENT, "device");
  expect_error(ork_matmul(device, NULL, a, 4, c, NULL), ORK_E_INVALID_ARGUMENT, "weights");
  expect_error(ork_matmul(device, w, NULL, 4, c, NULL), ORK_E_INVALID_ARGUMENT, "A");
  expect_error(ork_matmul(device, w, a, 4, NULL, NULL), ORK_E_INVALID_ARGUMENT, "C");
  expect_error(ork_matmul(device, w, a, 0, c, NULL), ORK_E_INVALID_ARGUMENT, "M");
  expect_error(ork_matmul(device, w, a, -1, c, NULL), ORK_E_INVALID_ARGUMENT, "M");
  expect_error(ork_matmul(device, w_other, a, 4, c, NULL), ORK_E_INVALID_ARGUMENT, "weights");
  ork_matmul_options o = {sizeof(o), 4, 0};
  expect_error(ork_matmul(device, w, a, 4, c, &o), ORK_E_INVALID_ARGUMENT, "cores");
  o.cores = -1;
  expect_error(ork_matmul(device, w, a, 4, c, &o), ORK_E_INVALID_ARGUMENT, "cores");
  o.cores = 0;
  o.mc_cap = -1;
  expect_error(ork_matmul(device, w, a, 4, c, &o), ORK_E_INVALID_ARGUMENT, "mc_cap");
  o.mc_cap = 0;
  o.struct_size = sizeof(o) + 64; /* from a newer header than the library */
  expect_error(ork_matmul(device, w, a, 4, c, &o), ORK_E_INVALID_ARGUMENT, "struct_size");
  ork_weights_destroy(w);
  ork_weights_destroy(w_other);
  check_matmul(device, 4, 64, 32, NULL, 9); /* the device works after the errors */
  ork_device_close(other);
  ork_device_close(device);
}

/* The cpu device takes the NPU's options: cores 1..3 (host threads) and mc_cap, same bytes;
 * 4 cores is refused as on the NPU, naming the range. */
static void test_cpu_takes_the_npu_core_range(void** state) {
  (void)state;
  ork_device* device = open_or_fail("cpu");
  int8_t wdata[64 * 32];
  int8_t a[3 * 64];
  for (int i = 0; i < 64 * 32; ++i) wdata[i] = (int8_t)(i * 37 % 251 - 125);
  for (int i = 0; i < 3 * 64; ++i) a[i] = (int8_t)(i * 11 % 199 - 99);
  int32_t want[3 * 32], c[3 * 32];
  for (int m = 0; m < 3; ++m)
    for (int n = 0; n < 32; ++n) {
      int32_t s = 0;
      for (int k = 0; k < 64; ++k) s += (int32_t)a[m * 64 + k] * wdata[k * 32 + n];
      want[m * 32 + n] = s;
    }
  ork_weights* w = NULL;
  assert_int_equal(ork_weights_create(device, ORK_DTYPE_INT8, 64, 32, wdata, &w), ORK_OK);
  for (int cores = 0; cores <= 3; ++cores) {
    ork_matmul_options o = {sizeof(o), cores, cores == 2 ? 1 : 0};
    memset(c, 0x5a, sizeof(c));
    assert_int_equal(ork_matmul(device, w, a, 3, c, &o), ORK_OK);
    assert_memory_equal(c, want, sizeof(want));
  }
  ork_matmul_options o = {sizeof(o), 4, 0};
  expect_error(ork_matmul(device, w, a, 1, c, &o), ORK_E_INVALID_ARGUMENT, "cores = 4: the device has 1..3");
  ork_weights_destroy(w);
  ork_device_close(device);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_version_and_status_strings),
      cmocka_unit_test(test_open_rejects_null_out_and_unknown_names),
      cmocka_unit_test(test_off_board_backends_open_with_their_info),
      cmocka_unit_test(test_auto_is_the_first_npu_here),
      cmocka_unit_test(test_real_drivers_open_the_node_here),
      cmocka_unit_test(test_ork_device_overrides_the_default),
      cmocka_unit_test(test_get_info_rejects_null),
      cmocka_unit_test(test_weights_create_rejects_bad_arguments),
      cmocka_unit_test(test_matmul_rejects_bad_arguments),
      cmocka_unit_test(test_cpu_takes_the_npu_core_range),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
