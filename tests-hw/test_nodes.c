/* Which device nodes execute, and whether discovery picks one that does (docs/hardware.md
 * section 11, card vs render node: ORK saw render-node submits on the vendor driver accepted
 * but running 0 tasks). For every node of the interface's directory (/dev/dri card* and
 * renderD* for rknpu, /dev/accel accel* for rocket) it opens INTERFACE:NODE and checks:
 *  - a node of another driver is refused with an error naming the node;
 *  - a node that opens reports that node and the interface, and the other interface's name
 *    on it is refused (the DRM driver-name check);
 *  - a small matmul on it is exact, or fails with an error (never wrong cells: a node whose
 *    submits run nothing must not hand back unwritten output);
 *  - the node discovery picks by default is one that executes, and on rknpu a card node
 *    whenever a card node of the driver exists (card before render).
 * It fails if no node executes. */
#include <dirent.h>

#include "hw_common.h"

static int starts_with(const char* s, const char* prefix) { return strncmp(s, prefix, strlen(prefix)) == 0; }

/* What one node did: 0 not this driver, 1 opens but does not execute, 2 executes, -1 a check
 * failed. */
static int try_node(const char* interface, const char* other, const char* path) {
  char name[300];
  ork_device* dev = NULL;
  snprintf(name, sizeof name, "%s:%s", interface, path);
  if (ork_device_open(name, &dev) != ORK_OK) {
    const char* why = ork_last_error();
    printf("  %s: not a %s node (%s)\n", path, interface, why);
    if (!strstr(why, path)) {
      printf("  %s: FAIL: the refusal does not name the node\n", path);
      return -1;
    }
    return 0;
  }
  ork_device_info info;
  ork_device_get_info(dev, &info);
  int result = 1;
  if (strcmp(info.node, path) != 0 || strcmp(info.backend, interface) != 0) {
    printf("  %s: FAIL: opened as %s on %s\n", path, info.backend, info.node);
    result = -1;
  }
  long bad = hw_check(dev, 4, 64, 32, 1, 31);
  if (bad > 0) {
    printf("  %s: FAIL: %ld wrong cells returned as a success\n", path, bad);
    result = -1;
  } else if (result > 0) {
    printf("  %s: %s\n", path, bad == 0 ? "executes" : "opens, but its submits fail (reported as errors)");
    result = bad == 0 ? 2 : 1;
  }
  ork_device_close(dev);
  ork_device* wrong = NULL;
  snprintf(name, sizeof name, "%s:%s", other, path);
  if (ork_device_open(name, &wrong) == ORK_OK) {
    printf("  %s: FAIL: opens as %s too (no driver-name check)\n", path, other);
    ork_device_close(wrong);
    return -1;
  }
  if (!strstr(ork_last_error(), interface)) {
    printf("  %s: FAIL: opening it as %s is refused without naming its driver: %s\n", path, other, ork_last_error());
    return -1;
  }
  return result;
}

int main(void) {
  ork_device* dev = hw_open("test_nodes");
  ork_device_info info;
  ork_device_get_info(dev, &info);
  ork_device_close(dev);
  const int rknpu = strcmp(info.backend, "rknpu") == 0;
  const char* interface = rknpu ? "rknpu" : "rocket";
  const char* other = rknpu ? "rocket" : "rknpu";
  const char* dir = rknpu ? "/dev/dri" : "/dev/accel";
  DIR* d = opendir(dir);
  if (!d) {
    printf("test_nodes: FAIL: %s cannot be listed although %s opened\n", dir, info.node);
    return 1;
  }
  int failed = 0, executing = 0, default_executes = 0, card_of_driver = 0;
  struct dirent* e;
  while ((e = readdir(d)) != NULL) {
    const int card = starts_with(e->d_name, "card");
    if (rknpu ? !(card || starts_with(e->d_name, "renderD")) : !starts_with(e->d_name, "accel")) continue;
    char path[280];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    const int r = try_node(interface, other, path);
    failed |= r < 0;
    executing += r == 2;
    card_of_driver |= card && r > 0;
    if (r == 2 && strcmp(path, info.node) == 0) default_executes = 1;
  }
  closedir(d);
  printf("  discovery's default node: %s\n", info.node);
  if (!default_executes) {
    printf("test_nodes: FAIL: the default node %s does not execute\n", info.node);
    failed = 1;
  }
  if (rknpu && card_of_driver && !starts_with(info.node, "/dev/dri/card")) {
    printf("test_nodes: FAIL: discovery picked %s although a card node of the driver exists\n", info.node);
    failed = 1;
  }
  if (!executing) printf("test_nodes: FAIL: no node executes\n");
  return failed || !executing ? 1 : 0;
}
