/* The quantised API from C11 (strict warnings as errors): the hand-computed w8a8 case of
 * tests/lib/quant/reference_test.cpp through ork_qweights_create / ork_qmatmul on the cpu
 * and emu devices.
 * A = [127, 2.5, -3.5, 0.5] -> codes [127, 2, -4, 0], scale 1; W column 0 = [1, 2, 3, 127]
 * (scale 1), column 1 = 0 (scale 0): C = [119, 0]. Exit 0 when every device gives it. */
#include <stdio.h>
#include <string.h>

#include "ork/ork.h"

static int check_device(const char* name) {
  static const float a[4] = {127.0f, 2.5f, -3.5f, 0.5f};
  static const float w[8] = {1, 0, 2, 0, 3, 0, 127, 0};
  ork_device* dev = NULL;
  ork_qweights* q = NULL;
  ork_quant_options qo;
  ork_qmatmul_options mo;
  float c[2] = {-1.0f, -1.0f};
  int ok = 0;
  memset(&qo, 0, sizeof(qo));
  memset(&mo, 0, sizeof(mo));
  qo.struct_size = sizeof(qo);
  qo.weight_bits = 8;
  mo.struct_size = sizeof(mo);
  mo.activation_bits = 8;
  if (ork_device_open(name, &dev) != ORK_OK) {
    fprintf(stderr, "%s: open: %s\n", name, ork_last_error());
    return 0;
  }
  if (ork_qweights_create(dev, w, 4, 2, &qo, &q) == ORK_OK && ork_qweights_groups(q) == 1 &&
      ork_qmatmul(dev, q, a, 1, c, &mo) == ORK_OK)
    ok = c[0] == 119.0f && c[1] == 0.0f;
  if (!ok) fprintf(stderr, "%s: C = [%g, %g] (want [119, 0]) %s\n", name, c[0], c[1], ork_last_error());
  ork_qweights_destroy(q);
  ork_device_close(dev);
  return ok;
}

int main(void) {
  int ok = check_device("cpu");
  ok = check_device("emu-rknpu") && ok;
  ok = check_device("emu-rocket") && ok;
  return ok ? 0 : 1;
}
