/* Settles docs/hardware.md 11's first conflict (docs/regcmd-contract.md section 2): libork feeds A
 * in the NC1HWC2 layout (MTX, Mesa), where ORK reported a flat row-major feature. Rows that are
 * not a multiple of 4 and K that is not a multiple of 16 put every row and every atom
 * boundary at a different byte offset under the two layouts: only the right one is exact. */
#include "hw_common.h"

int main(void) {
  ork_device* dev = hw_open("test_feature_layout");
  long failures = 0;
  failures += hw_check(dev, 5, 48, 32, 1, 11) != 0;
  failures += hw_check(dev, 37, 80, 64, 1, 12) != 0;
  failures += hw_check(dev, 131, 1056, 96, 1, 13) != 0;
  ork_device_close(dev);
  if (failures) printf("test_feature_layout: the NC1HWC2 feature layout is WRONG on this board\n");
  return failures ? 1 : 0;
}
