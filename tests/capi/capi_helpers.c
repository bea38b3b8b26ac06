#include "tests/capi/capi_helpers.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int is_word_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

static int names_word(const char* text, const char* word) {
  const size_t len = strlen(word);
  for (const char* p = strstr(text, word); p != NULL; p = strstr(p + 1, word)) {
    const int starts = p == text || !is_word_char(p[-1]);
    const int ends = !is_word_char(p[len]);
    if (starts && ends) return 1;
  }
  return 0;
}

void expect_error(ork_status status, ork_status expected, const char* word) {
  const char* msg = ork_last_error();
  if (status != expected)
    print_error("status %d (%s), expected %d (%s); message: %s\n", (int)status,
                ork_status_string(status), (int)expected, ork_status_string(expected),
                msg ? msg : "(null)");
  assert_int_equal(status, expected);
  assert_non_null(msg);
  assert_true(strlen(msg) > 0);
  if (!names_word(msg, word)) print_error("message \"%s\" does not name \"%s\"\n", msg, word);
  assert_true(names_word(msg, word));
}

int real_npu_nodes_present(void) {
  return access("/dev/accel", F_OK) == 0 || access("/dev/dri", F_OK) == 0 ||
         access("/dev/rknpu", F_OK) == 0;
}

ork_device* open_or_fail(const char* name) {
  ork_device* device = NULL;
  const ork_status st = ork_device_open(name, &device);
  if (st != ORK_OK) print_error("open %s: %s: %s\n", name, ork_status_string(st), ork_last_error());
  assert_int_equal(st, ORK_OK);
  assert_non_null(device);
  return device;
}

void fill_int8(int8_t* out, size_t count, uint32_t seed) {
  for (size_t i = 0; i < count; ++i) {
    seed = seed * 1664525u + 1013904223u; /* Numerical Recipes LCG */
    out[i] = (int8_t)(seed >> 24);
  }
}

void plain_matmul(const int8_t* a, const int8_t* w, int32_t* c, int64_t m, int64_t k, int64_t n) {
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      int32_t sum = 0;
      for (int64_t x = 0; x < k; ++x) sum += (int32_t)a[i * k + x] * (int32_t)w[x * n + j];
      c[i * n + j] = sum;
    }
  }
}

void check_matmul(ork_device* device, int64_t m, int64_t k, int64_t n,
                  const ork_matmul_options* options, uint32_t seed) {
  int8_t* a = malloc((size_t)(m * k));
  int8_t* w = malloc((size_t)(k * n));
  int32_t* want = malloc((size_t)(m * n) * sizeof(int32_t));
  int32_t* got = malloc((size_t)(m * n) * sizeof(int32_t));
  assert_true(a && w && want && got);
  fill_int8(a, (size_t)(m * k), seed);
  fill_int8(w, (size_t)(k * n), seed + 1);
  plain_matmul(a, w, want, m, k, n);
  memset(got, 0x5A, (size_t)(m * n) * sizeof(int32_t)); /* poison: every cell must be written */
  ork_weights* weights = NULL;
  ork_status st = ork_weights_create(device, ORK_DTYPE_INT8, k, n, w, &weights);
  if (st != ORK_OK) print_error("weights %lldx%lld: %s\n", (long long)k, (long long)n, ork_last_error());
  assert_int_equal(st, ORK_OK);
  st = ork_matmul(device, weights, a, m, got, options);
  if (st != ORK_OK)
    print_error("matmul %lldx%lldx%lld: %s\n", (long long)m, (long long)k, (long long)n,
                ork_last_error());
  assert_int_equal(st, ORK_OK);
  for (int64_t i = 0; i < m * n; ++i) {
    if (got[i] != want[i]) {
      print_error("%lldx%lldx%lld: first bad cell C[%lld][%lld]: expected %d, got %d\n",
                  (long long)m, (long long)k, (long long)n, (long long)(i / n),
                  (long long)(i % n), want[i], got[i]);
      fail();
    }
  }
  ork_weights_destroy(weights);
  free(a);
  free(w);
  free(want);
  free(got);
}
