/* tests-hw: the on-board regression suite. Each test is a small C program over the public
 * API only (it builds against an installed libork too). It opens the default device
 * ($ORK_DEVICE, else auto) and says in its first line whether that is the REAL DEVICE or
 * the EMULATOR. Under meson every program runs through hw_run (hw_run.c), once per kernel
 * interface: on a board against the real node with no shim, off the board under the
 * emulator's LD_PRELOAD shim, whose fake /dev and sysfs the library's real discovery finds.
 * hw_run sets ORK_HW_EXPECT=real|emulator; a program that then opens something else fails.
 * Run by hand with no NPU kernel interface it exits 77 (SKIP).
 * Exit codes: 0 pass, 1 fail, 77 skip. */
#ifndef ORK_TESTS_HW_COMMON_H
#define ORK_TESTS_HW_COMMON_H

#include <ork/ork.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HW_SKIP 77

/* Opens the default device. With ORK_HW_EXPECT set (by hw_run) the device must open and be
 * what hw_run announced (real or emulated, of the interface ORK_DEVICE names); without it a
 * device that is not an NPU kernel interface skips. */
static ork_device* hw_open(const char* test) {
  ork_device* dev = NULL;
  ork_device_info info;
  const char* expect = getenv("ORK_HW_EXPECT");
  const char* wanted = getenv("ORK_DEVICE");
  const int strict = expect && *expect;
  if (ork_device_open(NULL, &dev) != ORK_OK) {
    printf("%s: %s: no device: %s\n", test, strict ? "FAIL" : "SKIP", ork_last_error());
    exit(strict ? 1 : HW_SKIP);
  }
  ork_device_get_info(dev, &info);
  if (strcmp(info.backend, "rknpu") != 0 && strcmp(info.backend, "rocket") != 0) {
    printf("%s: %s: default device is '%s', not an NPU (set ORK_DEVICE=rknpu or rocket)\n", test,
           strict ? "FAIL" : "SKIP", info.backend);
    ork_device_close(dev);
    exit(strict ? 1 : HW_SKIP);
  }
  printf("%s: %s: %s on %s (driver %s, hw version 0x%08x, %d cores)\n", test,
         info.emulated ? "EMULATOR" : "REAL DEVICE", info.backend, info.node, info.driver_version, info.hw_version,
         info.cores);
  if (strict) {
    const int want_emulated = strcmp(expect, "emulator") == 0;
    if (info.emulated != want_emulated || (wanted && strncmp(wanted, info.backend, strlen(info.backend)) != 0)) {
      printf("%s: FAIL: expected the %s of '%s', opened %s%s\n", test, want_emulated ? "emulator" : "real device",
             wanted ? wanted : "", info.emulated ? "the emulated " : "the real ", info.backend);
      exit(1);
    }
  }
  return dev;
}

/* Deterministic int8 data over the whole range (xorshift). */
static void hw_fill(int8_t* p, int64_t n, uint32_t seed) {
  uint32_t x = seed ? seed : 1;
  for (int64_t i = 0; i < n; ++i) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    p[i] = (int8_t)(x & 0xff);
  }
}

/* Runs C = A x W on `dev` and compares every cell with a plain loop. Returns the number of
 * wrong cells (printing the first few), or -1 when the library refused the call. */
static inline long hw_check(ork_device* dev, int64_t m, int64_t k, int64_t n, int cores, uint32_t seed) {
  int8_t* a = malloc((size_t)(m * k));
  int8_t* w = malloc((size_t)(k * n));
  int32_t* c = malloc((size_t)(m * n) * 4);
  ork_weights* wt = NULL;
  long bad = -1;
  if (!a || !w || !c) goto out;
  hw_fill(a, m * k, seed);
  hw_fill(w, k * n, seed * 7 + 1);
  if (ork_weights_create(dev, ORK_DTYPE_INT8, k, n, w, &wt) != ORK_OK) {
    printf("  weights %lldx%lld refused: %s\n", (long long)k, (long long)n, ork_last_error());
    goto out;
  }
  ork_matmul_options opt = {sizeof opt, cores, 0};
  if (ork_matmul(dev, wt, a, m, c, &opt) != ORK_OK) {
    printf("  matmul %lldx%lldx%lld on %d cores failed: %s\n", (long long)m, (long long)k, (long long)n, cores,
           ork_last_error());
    goto out;
  }
  bad = 0;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      int64_t s = 0;
      for (int64_t p = 0; p < k; ++p) s += (int64_t)a[i * k + p] * w[p * n + j];
      if (s != c[i * n + j] && bad++ < 5)
        printf("  cell (%lld, %lld): got %d, want %lld\n", (long long)i, (long long)j, c[i * n + j], (long long)s);
    }
  printf("  %lldx%lldx%lld on %d cores: %s (%ld wrong cells)\n", (long long)m, (long long)k, (long long)n, cores,
         bad ? "FAIL" : "ok", bad);
out:
  ork_weights_destroy(wt);
  free(a);
  free(w);
  free(c);
  return bad;
}

#endif
