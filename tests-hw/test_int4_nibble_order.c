/* int4 nibble order on the board (docs/regcmd-contract.md section 2: element i = low nibble of byte i/2
 * when i is even; no public source states it). A is a 0/1 selection matrix (row m picks
 * K index m), so C[m][n] = W[m][n]: with the other order the silicon would return
 * W[m ^ 1][n] (neighbouring K swapped) -- printed as the diagnosis. W4A4 and w4a8. */
#include "hw_common.h"

enum { M = 64, K = 64, N = 64 };

static void pack(const int8_t* v, size_t count, uint8_t* out) {
  memset(out, 0, (count + 1) / 2);
  for (size_t i = 0; i < count; ++i) out[i / 2] |= (uint8_t)(((uint8_t)v[i] & 0x0f) << (i % 2 ? 4 : 0));
}

static long run(ork_device* dev, int w4a8) {
  static int8_t a[M * K], w[K * N];
  static uint8_t ap[M * K / 2], wp[K * N / 2];
  static int32_t c[M * N];
  memset(a, 0, sizeof a);
  for (int m = 0; m < M; ++m) a[m * K + m] = 1;
  for (int k = 0; k < K; ++k)
    for (int n = 0; n < N; ++n) w[k * N + n] = (int8_t)((k * 5 + n * 3) % 16 - 8);
  pack(a, sizeof a, ap);
  pack(w, sizeof w, wp);
  ork_weights* wt = NULL;
  if (ork_weights_create(dev, ORK_DTYPE_INT4, K, N, wp, &wt) != ORK_OK) {
    printf("  weights refused: %s\n", ork_last_error());
    return -1;
  }
  ork_matmul_options opt = {sizeof opt, 1, 0, w4a8 ? ORK_DTYPE_INT8 : 0, 0};
  long bad = 0, swapped = 0;
  if (ork_matmul(dev, wt, w4a8 ? (const void*)a : (const void*)ap, M, c, &opt) != ORK_OK) {
    printf("  matmul failed: %s\n", ork_last_error());
    bad = -1;
  } else {
    for (int m = 0; m < M; ++m)
      for (int n = 0; n < N; ++n) {
        bad += c[m * N + n] != w[m * N + n];
        swapped += c[m * N + n] == w[(m ^ 1) * N + n];
      }
    printf("  %s: %ld wrong cells%s\n", w4a8 ? "w4a8" : "W4A4", bad,
           bad && swapped == M * N ? " -- every cell is its K neighbour's: the silicon reads the HIGH nibble first" : "");
  }
  ork_weights_destroy(wt);
  return bad;
}

int main(void) {
  ork_device* dev = hw_open("test_int4_nibble_order");
  const long failures = (run(dev, 0) != 0) + (run(dev, 1) != 0);
  ork_device_close(dev);
  return failures ? 1 : 0;
}
