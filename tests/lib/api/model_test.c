/* ork_model / ork_session (include/ork/ork.h, "Streamed models"): a tiny packed model run a
 * token at a time under a budget smaller than the model, the same output bytes on cpu, emu
 * and emu-rocket and in every order, a caller's own input, each bad argument named, and
 * the handles' lifetimes (a model closed before its session, second closes).
 * ORK_TEST_MODEL: a packed tiny model of 3 layers (ork_pack --synthetic tiny --layers 3). */
#define _DEFAULT_SOURCE /* mkdtemp, mkfifo, alarm (c_std=c11 hides POSIX) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/lib/api/capi_helpers.h"

static const char* model_path(void) {
  const char* p = getenv("ORK_TEST_MODEL");
  assert_non_null(p);
  return p;
}

/* Runs token 0 (input NULL = the synthetic one, or `input`) and returns the output. */
static void run_token(const char* device_name, ork_order order, const int8_t* input, int8_t* out, size_t bytes) {
  ork_device* device = open_or_fail(device_name);
  ork_model* model = NULL;
  assert_int_equal(ork_model_open(model_path(), &model), ORK_OK);
  ork_session_options o;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.budget_bytes = 96 << 10; /* the model is 3 x 52 KiB */
  o.order = order;
  ork_session* s = NULL;
  assert_int_equal(ork_session_create(device, model, &o, &s), ORK_OK);
  assert_int_equal(ork_session_run_token(s, input, input ? bytes : 0), ORK_OK);
  size_t size = 0;
  assert_int_equal(ork_session_read_output(s, out, bytes, &size), ORK_OK);
  assert_int_equal(size, bytes);
  ork_session_destroy(s);
  ork_model_close(model);
  ork_device_close(device);
}

static void test_info(void** state) {
  (void)state;
  ork_model* model = NULL;
  assert_int_equal(ork_model_open(model_path(), &model), ORK_OK);
  ork_model_info info;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  assert_int_equal(ork_model_get_info(model, &info), ORK_OK);
  assert_int_equal(info.dtype, ORK_DTYPE_INT8);
  assert_int_equal(info.hidden, 64);
  assert_int_equal(info.layers, 3);
  assert_int_equal(info.matmuls_per_layer, 7);
  assert_int_equal(info.largest_layer_bytes, 4 * 4096 + 3 * 12288);
  assert_true(info.weight_bytes > 96 << 10);
  ork_model_close(model);
}

static void test_same_bytes_on_every_backend_and_order(void** state) {
  (void)state;
  int8_t want[64], got[64];
  run_token("cpu", ORK_ORDER_SEQUENTIAL, NULL, want, sizeof want);
  int distinct = 0;
  for (int i = 0; i < 64; ++i) {
    int seen = 0;
    for (int j = 0; j < i; ++j) seen |= want[j] == want[i];
    distinct += !seen;
  }
  assert_true(distinct > 16); /* an output with information in it */
  const char* devices[] = {"cpu", "emu", "emu-rocket"};
  const ork_order orders[] = {ORK_ORDER_SCHEDULED, ORK_ORDER_FIFO, ORK_ORDER_SEQUENTIAL};
  for (int d = 0; d < 3; ++d)
    for (int o = 0; o < 3; ++o) {
      memset(got, 0x55, sizeof got);
      run_token(devices[d], orders[o], NULL, got, sizeof got);
      assert_memory_equal(got, want, sizeof want);
    }
}

static void test_own_input_changes_the_output(void** state) {
  (void)state;
  int8_t input[64], a[64], b[64];
  fill_int8(input, sizeof input, 11);
  run_token("emu", ORK_ORDER_SCHEDULED, input, a, sizeof a);
  run_token("cpu", ORK_ORDER_SEQUENTIAL, input, b, sizeof b);
  assert_memory_equal(a, b, sizeof a);
  run_token("cpu", ORK_ORDER_SEQUENTIAL, NULL, b, sizeof b);
  assert_memory_not_equal(a, b, sizeof a);
}

static void test_bad_arguments_are_named(void** state) {
  (void)state;
  ork_model* model = (ork_model*)&model;
  expect_error(ork_model_open("/nonexistent/model.ork", &model), ORK_E_INVALID_ARGUMENT, "model");
  assert_null(model);
  expect_error(ork_model_open(NULL, &model), ORK_E_INVALID_ARGUMENT, "path");
  assert_int_equal(ork_model_open(model_path(), &model), ORK_OK);
  ork_device* device = open_or_fail("emu");
  ork_session* s = NULL;
  ork_session_options o;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.budget_bytes = 16 << 10;
  expect_error(ork_session_create(device, model, &o, &s), ORK_E_INVALID_ARGUMENT, "budget");
  assert_null(s);
  o.budget_bytes = 96 << 10;
  o.order = 7;
  expect_error(ork_session_create(device, model, &o, &s), ORK_E_INVALID_ARGUMENT, "order");
  o.order = ORK_ORDER_FIFO;
  expect_error(ork_session_create(NULL, model, &o, &s), ORK_E_INVALID_ARGUMENT, "device");
  assert_int_equal(ork_session_create(device, model, &o, &s), ORK_OK);
  int8_t buf[64];
  size_t size = 0;
  expect_error(ork_session_read_output(s, buf, sizeof buf, &size), ORK_E_INVALID_ARGUMENT, "token");
  expect_error(ork_session_run_token(s, buf, 63), ORK_E_INVALID_ARGUMENT, "input_bytes");
  assert_int_equal(ork_session_run_token(s, NULL, 0), ORK_OK);
  expect_error(ork_session_read_output(s, buf, 32, &size), ORK_E_INVALID_ARGUMENT, "capacity");
  assert_int_equal(size, 64);
  ork_session_destroy(s);
  ork_model_close(model);
  ork_device_close(device);
}

/* The model closed before its session (once a use after free): the session keeps it and
 * still gives the same output; the device closed under a session refuses its next token;
 * a second close, destroy or a session on a closed model is refused with a message. */
static void test_model_closed_before_its_session(void** state) {
  (void)state;
  int8_t want[64], got[64];
  run_token("emu", ORK_ORDER_SCHEDULED, NULL, want, sizeof want);
  ork_device* device = open_or_fail("emu");
  ork_model* model = NULL;
  assert_int_equal(ork_model_open(model_path(), &model), ORK_OK);
  ork_session* s = NULL;
  ork_session_options o;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.budget_bytes = 96 << 10;
  assert_int_equal(ork_session_create(device, model, &o, &s), ORK_OK);
  ork_model_close(model);
  ork_model_close(model); /* closed already: ignored, named */
  assert_non_null(strstr(ork_last_error(), "ork_model_close: not an open model"));
  ork_session* s2 = NULL;
  expect_error(ork_session_create(device, model, &o, &s2), ORK_E_INVALID_ARGUMENT, "not an open model");
  assert_null(s2);
  assert_int_equal(ork_session_run_token(s, NULL, 0), ORK_OK);
  size_t size = 0;
  assert_int_equal(ork_session_read_output(s, got, sizeof got, &size), ORK_OK);
  assert_memory_equal(got, want, sizeof want);
  ork_device_close(device);
  expect_error(ork_session_run_token(s, NULL, 0), ORK_E_INVALID_ARGUMENT, "device was closed");
  ork_session_destroy(s);
  ork_session_destroy(s); /* destroyed already: ignored, named */
  assert_non_null(strstr(ork_last_error(), "ork_session_destroy: not a live session"));
  expect_error(ork_session_run_token(s, NULL, 0), ORK_E_INVALID_ARGUMENT, "not a live session");
}

/* One struct_size rule (lib/api/struct_size.h): an output struct of struct_size 0 is refused
 * as every other is, options larger than the library knows are refused; a NULL output
 * buffer is named as such, not as a capacity; a FIFO is refused, never waited on. */
static void test_struct_size_rule_null_output_and_fifo(void** state) {
  (void)state;
  ork_model* model = NULL;
  assert_int_equal(ork_model_open(model_path(), &model), ORK_OK);
  ork_model_info info;
  memset(&info, 0, sizeof info);
  expect_error(ork_model_get_info(model, &info), ORK_E_INVALID_ARGUMENT, "struct_size is 0");
  info.struct_size = 4;
  expect_error(ork_model_get_info(model, &info), ORK_E_INVALID_ARGUMENT, "struct_size");
  info.struct_size = sizeof info + 16; /* a newer caller: the fields this library knows */
  assert_int_equal(ork_model_get_info(model, &info), ORK_OK);
  assert_int_equal(info.struct_size, sizeof info);
  assert_int_equal(info.layers, 3);
  ork_device* device = open_or_fail("cpu");
  ork_session* s = NULL;
  ork_session_options o;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o + 8;
  o.budget_bytes = 96 << 10;
  expect_error(ork_session_create(device, model, &o, &s), ORK_E_INVALID_ARGUMENT, "larger than this library knows");
  assert_null(s);
  o.struct_size = sizeof o;
  assert_int_equal(ork_session_create(device, model, &o, &s), ORK_OK);
  assert_int_equal(ork_session_run_token(s, NULL, 0), ORK_OK);
  size_t size = 0;
  expect_error(ork_session_read_output(s, NULL, 64, &size), ORK_E_INVALID_ARGUMENT, "out is NULL");
  assert_null(strstr(ork_last_error(), "capacity"));
  assert_int_equal(size, 64);
  ork_session_destroy(s);
  ork_device_close(device);
  ork_model_close(model);
  char dir[] = "/tmp/ork_model_fifo_XXXXXX";
  assert_non_null(mkdtemp(dir));
  char fifo[64];
  snprintf(fifo, sizeof fifo, "%s/model.ork", dir);
  assert_int_equal(mkfifo(fifo, 0600), 0);
  alarm(60); /* a regression blocks in open(2): fail by SIGALRM rather than hang */
  model = (ork_model*)&model;
  expect_error(ork_model_open(fifo, &model), ORK_E_INVALID_ARGUMENT, "a FIFO, not a packed model file");
  alarm(0);
  assert_null(model);
  unlink(fifo);
  rmdir(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_info),
      cmocka_unit_test(test_same_bytes_on_every_backend_and_order),
      cmocka_unit_test(test_own_input_changes_the_output),
      cmocka_unit_test(test_bad_arguments_are_named),
      cmocka_unit_test(test_model_closed_before_its_session),
      cmocka_unit_test(test_struct_size_rule_null_output_and_fifo),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
