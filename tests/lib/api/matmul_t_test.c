/* C = A x W through the C API on emu (both kernel interfaces) and on cpu, compared with a
 * plain C loop, at the sweep shapes (tests/e2e/sweep_cases.h) that stay fast here. */
#include <stdlib.h>
#include <string.h>

#include "tests/lib/api/capi_helpers.h"

typedef struct Shape {
  int64_t m, k, n;
} Shape;

/* 1 x 32 x 32: the decode row; 64 x 512 x 96: several N-tasks over 3 cores; 129 x 2048 x 64:
 * one row past the 128-row M-tile of K = 2048 (docs/hardware.md 10.2); 5 x 40 x 24: K, N padded. */
static const Shape kShapes[] = {{1, 32, 32}, {64, 512, 96}, {129, 2048, 64}, {5, 40, 24}};
#define SHAPE_COUNT (sizeof(kShapes) / sizeof(kShapes[0]))

static void run_all_shapes(const char* device_name, int max_cores) {
  ork_device* device = open_or_fail(device_name);
  for (size_t i = 0; i < SHAPE_COUNT; ++i) {
    check_matmul(device, kShapes[i].m, kShapes[i].k, kShapes[i].n, NULL, (uint32_t)(7 + i));
    for (int cores = 1; cores <= max_cores; ++cores) {
      ork_matmul_options o;
      memset(&o, 0, sizeof(o));
      o.struct_size = sizeof(o);
      o.cores = cores;
      check_matmul(device, kShapes[i].m, kShapes[i].k, kShapes[i].n, &o, (uint32_t)(11 + i));
    }
  }
  ork_device_close(device);
}

static void test_emu_rknpu(void** state) {
  (void)state;
  run_all_shapes("emu-rknpu", 3);
}

static void test_emu_rocket(void** state) {
  (void)state;
  run_all_shapes("emu-rocket", 3);
}

static void test_cpu(void** state) {
  (void)state;
  run_all_shapes("cpu", 3); /* cores as host threads, the same bytes */
}

/* The old 31-row cap (docs/hardware.md 10.2) as an experiment knob: more tiles, same bytes. Options
 * with struct_size 0 mean "all defaults" whatever the other fields say. */
static void test_mc_cap_and_default_options(void** state) {
  (void)state;
  ork_device* device = open_or_fail("emu");
  ork_matmul_options o;
  memset(&o, 0, sizeof(o));
  o.struct_size = sizeof(o);
  o.mc_cap = 31;
  check_matmul(device, 100, 512, 64, &o, 21);
  o.struct_size = 0;
  o.cores = 99; /* ignored: struct_size 0 = defaults */
  check_matmul(device, 3, 64, 32, &o, 22);
  ork_device_close(device);
}

/* Weights stay resident: several matmuls with different M on the same weights. */
static void test_weights_are_reused(void** state) {
  (void)state;
  ork_device* device = open_or_fail("emu-rocket");
  const int64_t k = 96, n = 64;
  int8_t* w = malloc((size_t)(k * n));
  int8_t* a = malloc((size_t)(70 * k));
  int32_t* want = malloc(70 * (size_t)n * sizeof(int32_t));
  int32_t* got = malloc(70 * (size_t)n * sizeof(int32_t));
  assert_true(w && a && want && got);
  fill_int8(w, (size_t)(k * n), 31);
  ork_weights* weights = NULL;
  assert_int_equal(ork_weights_create(device, ORK_DTYPE_INT8, k, n, w, &weights), ORK_OK);
  const int64_t ms[] = {1, 70, 2, 65};
  for (size_t i = 0; i < 4; ++i) {
    fill_int8(a, (size_t)(ms[i] * k), (uint32_t)(40 + i));
    plain_matmul(a, w, want, ms[i], k, n);
    assert_int_equal(ork_matmul(device, weights, a, ms[i], got, NULL), ORK_OK);
    assert_memory_equal(got, want, (size_t)(ms[i] * n) * sizeof(int32_t));
  }
  ork_weights_destroy(weights);
  ork_device_close(device);
  free(w);
  free(a);
  free(want);
  free(got);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_emu_rknpu),
      cmocka_unit_test(test_emu_rocket),
      cmocka_unit_test(test_cpu),
      cmocka_unit_test(test_mc_cap_and_default_options),
      cmocka_unit_test(test_weights_are_reused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
