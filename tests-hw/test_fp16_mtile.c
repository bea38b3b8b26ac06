/* fp16 M-tiles on the board (the published M-tile experiment, docs/dtypes.md "fp16": sched=1
 * exact for mc <= 8, wrong from 9 at K = 2048; the follow-up's single-core guard). The
 * planner avoids the bad configuration; this checks that what it runs instead (resident-row
 * tiles of R rows from K = 2048, K-reduction below) is exact on 1 and 3 cores. Inputs 0..9
 * (as MTX's tests): every sum is exact in fp32 in any order, so a wrong row is a schedule
 * problem, not rounding. */
#include "hw_common.h"

static uint16_t half_of_int(int v) {
  if (v == 0) return 0;
  int e = 0;
  while ((v >> (e + 1)) != 0) ++e;
  return (uint16_t)(((e + 15) << 10) | ((v << (10 - e)) & 0x3ff));
}

static long check(ork_device* dev, int64_t m, int64_t k, int64_t n, int cores) {
  uint16_t* a = malloc((size_t)(m * k) * 2);
  uint16_t* w = malloc((size_t)(k * n) * 2);
  float* c = malloc((size_t)(m * n) * 4);
  for (int64_t i = 0; i < m * k; ++i) a[i] = half_of_int((int)((i * 7 + 3) % 10));
  for (int64_t i = 0; i < k * n; ++i) w[i] = half_of_int((int)((i * 5 + 1) % 10));
  ork_weights* wt = NULL;
  long bad = -1;
  if (ork_weights_create(dev, ORK_DTYPE_FP16, k, n, w, &wt) == ORK_OK) {
    ork_matmul_options opt = {sizeof opt, cores, 0, 0, 0};
    if (ork_matmul(dev, wt, a, m, c, &opt) == ORK_OK) {
      bad = 0;
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          int64_t s = 0;
          for (int64_t p = 0; p < k; ++p) s += (int64_t)((i * k + p) * 7 + 3) % 10 * (((p * n + j) * 5 + 1) % 10);
          if ((float)s != c[i * n + j] && bad++ < 5) printf("  cell (%lld, %lld): got %.1f, want %lld\n", (long long)i, (long long)j, c[i * n + j], (long long)s);
        }
    }
  }
  printf("  fp16 %lldx%lldx%lld on %d cores: %s\n", (long long)m, (long long)k, (long long)n, cores, bad == 0 ? "ok" : "FAIL");
  ork_weights_destroy(wt);
  free(a), free(w), free(c);
  return bad;
}

int main(void) {
  ork_device* dev = hw_open("test_fp16_mtile");
  static const int64_t shapes[][2] = {{8, 2048}, {9, 2048}, {100, 2048}, {9, 1024}, {33, 4096}, {17, 4128}};
  long failures = 0;
  for (size_t i = 0; i < 6; ++i)
    for (int cores = 1; cores <= 3; cores += 2) failures += check(dev, shapes[i][0], shapes[i][1], 64, cores) != 0;
  ork_device_close(dev);
  return failures ? 1 : 0;
}
