/* The bank limit of the published M-tile experiment on the board (docs/matmul-schedule.md):
 * full-K M-tiles of mg_max*64 rows are exact (the planner's default) at K = 512, 1024, 2048,
 * 3584, 4096, with tiles that end exactly at the limit and one row past it (which the
 * planner splits). */
#include "hw_common.h"

int main(void) {
  ork_device* dev = hw_open("test_bank_limit");
  static const int64_t table[][2] = {{512, 704}, {1024, 320}, {2048, 128}, {3584, 64}, {4096, 64}};
  long failures = 0;
  for (size_t i = 0; i < 5; ++i) {
    failures += hw_check(dev, table[i][1], table[i][0], 64, 1, 21) != 0;
    failures += hw_check(dev, table[i][1] + 1, table[i][0], 64, 1, 22) != 0;
  }
  ork_device_close(dev);
  return failures ? 1 : 0;
}
