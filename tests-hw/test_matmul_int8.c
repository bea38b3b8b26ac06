/* int8 matmuls across the schedule's edges on the board: M-tile edges at the bank limit,
 * N-task edges, K-slices, every core count. */
#include "hw_common.h"

int main(void) {
  ork_device* dev = hw_open("test_matmul_int8");
  static const int64_t shapes[][3] = {
      {1, 32, 32},    {4, 2048, 2048}, {63, 512, 96},   {65, 1024, 64}, {128, 2048, 64},
      {129, 2048, 64}, {704, 512, 32}, {705, 512, 32},  {3, 4096, 8224}, {33, 6144, 96},
  };
  long failures = 0;
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; ++i)
    for (int cores = 1; cores <= 3; ++cores)
      failures += hw_check(dev, shapes[i][0], shapes[i][1], shapes[i][2], cores, (uint32_t)(i + 1)) != 0;
  ork_device_close(dev);
  return failures ? 1 : 0;
}
