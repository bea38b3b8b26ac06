/* int8 K-slices wider than the 2048 the board has verified (docs/hardware.md section 9 and
 * 10.4): the planner slices K past 4096 into the fewest slices of at most 3072 (the widest
 * with the resident-row budget R = 32 of a 2048-wide slice; driver/common/cbuf_limits.h), a
 * model prediction this program checks on silicon. K = 6016 is two slices of 3008 and
 * K = 8960 is 3008 + 3008 + 2944; M = 32 fills a tile to R (mc = 32), M = 1 is decode. Every
 * cell exact against the C loop, on 1, 2 and 3 cores. */
#include "hw_common.h"

int main(void) {
  ork_device* dev = hw_open("test_wide_slices");
  static const int64_t shapes[][3] = {{32, 6016, 64}, {1, 6016, 64}, {32, 8960, 96}, {1, 8960, 96}};
  long failures = 0;
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; ++i)
    for (int cores = 1; cores <= 3; ++cores)
      failures += hw_check(dev, shapes[i][0], shapes[i][1], shapes[i][2], cores, (uint32_t)(i + 41)) != 0;
  ork_device_close(dev);
  return failures ? 1 : 0;
}
