/* The dtypes added within API version 1 through the C API, as a C program uses them: fp16 weights with fp32 and
 * fp16 C, int4 weights as W4A4 (int4 A) and w4a8 (int8 A, options.a_dtype), bad combinations
 * named, and old callers whose options end before a_dtype. Every backend against plain loops. */
#include <stdlib.h>
#include <string.h>

#include "tests/lib/api/capi_helpers.h"

static const char* const kDevices[] = {"emu-rknpu", "emu-rocket", "cpu"};
#define DEVICE_COUNT 3

/* binary16 bits of a small non-negative integer (< 2048: exact). */
static uint16_t half_of_int(int v) {
  if (v == 0) return 0;
  int e = 0;
  while ((v >> (e + 1)) != 0) ++e;
  return (uint16_t)(((e + 15) << 10) | ((v << (10 - e)) & 0x3ff));
}

/* Inputs 0..9 as in MTX's tests: every sum is an integer below 2^24, exact in any order. */
static void check_fp16(const char* name, int64_t m, int64_t k, int64_t n, int fp16_c) {
  ork_device* device = open_or_fail(name);
  uint16_t* a = malloc((size_t)(m * k) * 2);
  uint16_t* w = malloc((size_t)(k * n) * 2);
  int* ai = malloc((size_t)(m * k) * sizeof(int));
  int* wi = malloc((size_t)(k * n) * sizeof(int));
  for (int64_t i = 0; i < m * k; ++i) a[i] = half_of_int(ai[i] = (int)((i * 7 + 3) % 10));
  for (int64_t i = 0; i < k * n; ++i) w[i] = half_of_int(wi[i] = (int)((i * 5 + 1) % 10));
  ork_weights* wt = NULL;
  assert_int_equal(ork_weights_create(device, ORK_DTYPE_FP16, k, n, w, &wt), ORK_OK);
  ork_matmul_options o;
  memset(&o, 0, sizeof(o));
  o.struct_size = sizeof(o);
  o.c_dtype = fp16_c ? ORK_DTYPE_FP16 : 0;
  float* c32 = malloc((size_t)(m * n) * 4);
  uint16_t* c16 = (uint16_t*)c32;
  assert_int_equal(ork_matmul(device, wt, a, m, c32, &o), ORK_OK);
  for (int64_t r = 0; r < m; ++r)
    for (int64_t col = 0; col < n; ++col) {
      int64_t want = 0;
      for (int64_t i = 0; i < k; ++i) want += (int64_t)ai[r * k + i] * wi[i * n + col];
      if (fp16_c) {
        if (want < 2048) assert_int_equal(c16[r * n + col], half_of_int((int)want));
      } else {
        assert_true(c32[r * n + col] == (float)want);
      }
    }
  ork_weights_destroy(wt);
  free(a), free(w), free(ai), free(wi), free(c32);
  ork_device_close(device);
}

static void test_fp16(void** state) {
  (void)state;
  for (int d = 0; d < DEVICE_COUNT; ++d) {
    check_fp16(kDevices[d], 5, 40, 24, 0);    /* K and N padded */
    check_fp16(kDevices[d], 20, 2048, 32, 0); /* docs/hardware.md 10.4: M > 8 at K = 2048 */
    check_fp16(kDevices[d], 3, 16, 16, 1);    /* fp16 C: sums < 2048, exact */
    check_fp16(kDevices[d], 3, 4128, 16, 0);  /* three K-slices */
  }
}

static void pack_int4(const int8_t* v, size_t count, uint8_t* out) {
  memset(out, 0, (count + 1) / 2);
  for (size_t i = 0; i < count; ++i) out[i / 2] |= (uint8_t)(((uint8_t)v[i] & 0x0f) << (i % 2 ? 4 : 0));
}

static void check_int4(const char* name, int64_t m, int64_t k, int64_t n, int w4a8) {
  ork_device* device = open_or_fail(name);
  int8_t* a = malloc((size_t)(m * k));
  int8_t* w = malloc((size_t)(k * n));
  uint8_t* ap = malloc((size_t)(m * k + 1) / 2);
  uint8_t* wp = malloc((size_t)(k * n + 1) / 2);
  fill_int8(a, (size_t)(m * k), 5);
  fill_int8(w, (size_t)(k * n), 6);
  for (int64_t i = 0; i < k * n; ++i) w[i] = (int8_t)(w[i] >> 4); /* -8..7 */
  if (!w4a8)
    for (int64_t i = 0; i < m * k; ++i) a[i] = (int8_t)(a[i] >> 4);
  pack_int4(w, (size_t)(k * n), wp);
  pack_int4(a, (size_t)(m * k), ap);
  ork_weights* wt = NULL;
  assert_int_equal(ork_weights_create(device, ORK_DTYPE_INT4, k, n, wp, &wt), ORK_OK);
  ork_matmul_options o;
  memset(&o, 0, sizeof(o));
  o.struct_size = sizeof(o);
  o.a_dtype = w4a8 ? ORK_DTYPE_INT8 : 0;
  int32_t* c = malloc((size_t)(m * n) * 4);
  int32_t* want = malloc((size_t)(m * n) * 4);
  assert_int_equal(ork_matmul(device, wt, w4a8 ? (const void*)a : (const void*)ap, m, c, &o), ORK_OK);
  plain_matmul(a, w, want, m, k, n);
  assert_memory_equal(c, want, (size_t)(m * n) * 4);
  ork_weights_destroy(wt);
  free(a), free(w), free(ap), free(wp), free(c), free(want);
  ork_device_close(device);
}

static void test_int4(void** state) {
  (void)state;
  for (int d = 0; d < DEVICE_COUNT; ++d) {
    check_int4(kDevices[d], 3, 33, 5, 0);      /* odd sizes: half-used last bytes */
    check_int4(kDevices[d], 130, 1000, 70, 0); /* three 480-wide K-slices, two M-tiles */
    check_int4(kDevices[d], 7, 1000, 70, 1);   /* w4a8 */
  }
}

static void test_bad_combinations(void** state) {
  (void)state;
  ork_device* device = open_or_fail("emu");
  int8_t w8[32 * 32] = {0};
  uint16_t w16[32 * 32] = {0};
  int32_t c[32 * 32];
  int8_t a8[32 * 32] = {0};
  ork_weights *wi8 = NULL, *wf16 = NULL;
  assert_int_equal(ork_weights_create(device, ORK_DTYPE_INT8, 32, 32, w8, &wi8), ORK_OK);
  assert_int_equal(ork_weights_create(device, ORK_DTYPE_FP16, 32, 32, w16, &wf16), ORK_OK);
  ork_matmul_options o;
  memset(&o, 0, sizeof(o));
  o.struct_size = sizeof(o);
  o.c_dtype = ORK_DTYPE_FP16;
  expect_error(ork_matmul(device, wi8, a8, 32, c, &o), ORK_E_INVALID_ARGUMENT, "c_dtype");
  o.c_dtype = ORK_DTYPE_INT32;
  expect_error(ork_matmul(device, wf16, a8, 32, c, &o), ORK_E_INVALID_ARGUMENT, "c_dtype");
  o.c_dtype = 0;
  o.a_dtype = ORK_DTYPE_INT8;
  expect_error(ork_matmul(device, wf16, a8, 32, c, &o), ORK_E_INVALID_ARGUMENT, "a_dtype");
  o.a_dtype = ORK_DTYPE_INT4;
  expect_error(ork_matmul(device, wi8, a8, 32, c, &o), ORK_E_INVALID_ARGUMENT, "a_dtype");
  /* A caller built against API 1 (options end at mc_cap): a_dtype/c_dtype read as 0. */
  o.struct_size = (uint32_t)offsetof(ork_matmul_options, a_dtype);
  o.a_dtype = 77;
  assert_int_equal(ork_matmul(device, wi8, a8, 32, c, &o), ORK_OK);
  ork_weights_destroy(wi8);
  ork_weights_destroy(wf16);
  ork_device_close(device);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_fp16), cmocka_unit_test(test_int4),
                                     cmocka_unit_test(test_bad_combinations)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
