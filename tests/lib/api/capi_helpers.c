#define _POSIX_C_SOURCE 200809L /* O_CLOEXEC, opendir */
#include "tests/lib/api/capi_helpers.h"

#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xf86drm.h>

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

/* The node number at the end of a name, for card2 before card10. */
static long node_number(const char* name) {
  const char* p = name + strlen(name);
  while (p > name && isdigit((unsigned char)p[-1])) --p;
  return *p ? strtol(p, NULL, 10) : -1;
}

/* The DRM driver behind `path` (drmGetVersion on the opened node), or 0 if it does not open. */
static int probe(const char* path, char* name, size_t name_size, int* emulated) {
  const int fd = open(path, O_RDWR | O_CLOEXEC);
  if (fd < 0) return 0;
  drmVersionPtr v = drmGetVersion(fd);
  close(fd);
  if (!v) return 0;
  snprintf(name, name_size, "%s", v->name ? v->name : "");
  *emulated = v->desc && strstr(v->desc, "[ork-emu]") != NULL; /* the fake kernel's mark */
  drmFreeVersion(v);
  return 1;
}

int npu_node(const char* driver, char* node, size_t size, int* emulated) {
  const int rknpu = strcmp(driver, "rknpu") == 0;
  const char* dir = rknpu ? "/dev/dri" : "/dev/accel";
  const char* kinds[2] = {rknpu ? "card" : "accel", rknpu ? "renderD" : NULL};
  for (int k = 0; k < 2 && kinds[k]; ++k) {
    DIR* d = opendir(dir);
    if (!d) return 0;
    long best = -1;
    char best_path[300] = "";
    int best_emulated = 0;
    struct dirent* e;
    while ((e = readdir(d)) != NULL) {
      if (strncmp(e->d_name, kinds[k], strlen(kinds[k])) != 0) continue;
      const long number = node_number(e->d_name);
      char path[300], name[64];
      int emu = 0;
      snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
      if (number < 0 || (best >= 0 && number >= best) || !probe(path, name, sizeof name, &emu)) continue;
      if (strcmp(name, driver) != 0) continue;
      best = number;
      best_emulated = emu;
      snprintf(best_path, sizeof best_path, "%s", path);
    }
    closedir(d);
    if (best >= 0) {
      snprintf(node, size, "%s", best_path);
      *emulated = best_emulated;
      return 1;
    }
  }
  return 0;
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
