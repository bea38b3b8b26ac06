/* The fp16 accumulation order on the board (docs/dtypes.md: per task acc = 0.0f, k
 * increasing, acc + a*b rounded to nearest even; unknown on silicon). Inputs where orders
 * differ: a[0]*w[0] = 2^24, then 1s. Sequential loses every 1 (2^24 + 1 ties to even) and
 * returns 2^24; pairwise or wider accumulators keep some. Prints what the silicon returns and
 * fails when it is not the documented value. Products are exact in fp32, so fused or not
 * makes no difference to the expectation computed here. */
#include "hw_common.h"

static uint16_t half_bits(int log2v) { return (uint16_t)((log2v + 15) << 10); } /* 2^log2v */

static int run(ork_device* dev, int64_t k, int64_t ones) {
  uint16_t* a = calloc((size_t)k, 2);
  uint16_t* w = calloc((size_t)(k * 16), 2);
  float c[16];
  a[0] = half_bits(12);
  for (int n = 0; n < 16; ++n) w[n] = half_bits(12); /* 2^12 * 2^12 = 2^24 */
  for (int64_t i = 1; i <= ones; ++i) {
    a[i] = half_bits(0);
    for (int n = 0; n < 16; ++n) w[i * 16 + n] = half_bits(0);
  }
  /* The documented order, as the library's reference computes it (one slice: k <= 4096). */
  float want = 0.0f;
  for (int64_t i = 0; i <= ones; ++i) want = want + (i == 0 ? 16777216.0f : 1.0f);
  ork_weights* wt = NULL;
  int rc = 1;
  if (ork_weights_create(dev, ORK_DTYPE_FP16, k, 16, w, &wt) == ORK_OK) {
    ork_matmul_options opt = {sizeof opt, 1, 0, 0, 0};
    if (ork_matmul(dev, wt, a, 1, c, &opt) == ORK_OK) {
      printf("  K = %lld, 2^24 then %lld ones: silicon %.1f, documented order %.1f (exact sum %.1f): %s\n",
             (long long)k, (long long)ones, c[0], want, 16777216.0 + (double)ones, c[0] == want ? "same" : "DIFFERENT");
      rc = c[0] == want ? 0 : 1;
    } else {
      printf("  matmul failed: %s\n", ork_last_error());
    }
  }
  ork_weights_destroy(wt);
  free(a), free(w);
  return rc;
}

int main(void) {
  ork_device* dev = hw_open("test_fp16_order");
  int failures = run(dev, 64, 63) + run(dev, 2048, 2047) + run(dev, 4096, 100);
  ork_device_close(dev);
  return failures ? 1 : 0;
}
