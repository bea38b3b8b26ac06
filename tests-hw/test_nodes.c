/* Card vs render node on the vendor driver (notes, conflict 3: ORK saw render-node submits
 * accepted but running 0 tasks). Runs one small matmul through each node that opens and
 * reports which execute; fails only when none does. */
#include "hw_common.h"

int main(void) {
  ork_device* dev = hw_open("test_nodes");
  ork_device_info info;
  ork_device_get_info(dev, &info);
  ork_device_close(dev);
  if (strcmp(info.backend, "rknpu") != 0) {
    printf("test_nodes: SKIP: only the vendor driver has card and render nodes\n");
    return HW_SKIP;
  }
  static const char* nodes[] = {"rknpu:/dev/dri/card0", "rknpu:/dev/dri/card1", "rknpu:/dev/dri/renderD128",
                                "rknpu:/dev/dri/renderD129"};
  int working = 0;
  for (size_t i = 0; i < 4; ++i) {
    if (ork_device_open(nodes[i], &dev) != ORK_OK) {
      printf("  %s: not an rknpu node (%s)\n", nodes[i], ork_last_error());
      continue;
    }
    long bad = hw_check(dev, 4, 64, 32, 1, 31);
    printf("  %s: %s\n", nodes[i], bad == 0 ? "executes" : "does NOT execute correctly");
    working += bad == 0;
    ork_device_close(dev);
  }
  return working ? 0 : 1;
}
