/* hw_run: runs one tests-hw program against the board when there is one, else against the
 * emulated NPU through the emulator's LD_PRELOAD shim.
 *
 *   hw_run [--shim PRELOAD] INTERFACE PROGRAM [ARGS...]      INTERFACE = rknpu | rocket
 *
 * It opens INTERFACE through libork's real discovery in this process (never under the shim):
 *  - a real (not emulated) device: PROGRAM runs on it with no shim (LD_PRELOAD removed);
 *  - no device of INTERFACE but a real device of the other interface (a board runs one NPU
 *    driver at a time): SKIP (77), saying which interface the board has;
 *  - no NPU node at all and --shim given: PROGRAM runs with LD_PRELOAD=PRELOAD, where the
 *    shim's fake /dev and sysfs are found by the same discovery code;
 *  - otherwise SKIP.
 * Its first line of output says which (REAL DEVICE or EMULATOR). PROGRAM gets
 * ORK_DEVICE=INTERFACE and ORK_HW_EXPECT=real|emulator, and fails if the device it opens is
 * not what was announced (hw_common.h). Exit status: PROGRAM's, or 77 (skip), 2 (usage). */
#define _POSIX_C_SOURCE 200809L /* setenv, unsetenv, execv */
#include <ork/ork.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HW_SKIP 77

/* 1 if `name` opens as a real device here (its info in *info), else 0. */
static int real_device(const char* name, ork_device_info* info) {
  ork_device* dev = NULL;
  if (ork_device_open(name, &dev) != ORK_OK) return 0;
  ork_device_get_info(dev, info);
  ork_device_close(dev);
  return !info->emulated;
}

static void run(char** argv, const char* interface, const char* expect) {
  setenv("ORK_DEVICE", interface, 1);
  setenv("ORK_HW_EXPECT", expect, 1);
  fflush(stdout);
  execv(argv[0], argv);
  printf("hw_run: cannot run %s\n", argv[0]);
  exit(1);
}

int main(int argc, char** argv) {
  int i = 1;
  const char* shim = NULL;
  if (i + 1 < argc && strcmp(argv[i], "--shim") == 0) {
    shim = argv[i + 1];
    i += 2;
  }
  if (argc - i < 2 || (strcmp(argv[i], "rknpu") != 0 && strcmp(argv[i], "rocket") != 0)) {
    fprintf(stderr, "usage: hw_run [--shim PRELOAD] rknpu|rocket PROGRAM [ARGS...]\n");
    return 2;
  }
  const char* interface = argv[i];
  const char* other = strcmp(interface, "rknpu") == 0 ? "rocket" : "rknpu";
  char** program = argv + i + 1;
  ork_device_info info;
  if (real_device(interface, &info)) {
    printf("tests-hw: REAL DEVICE: %s on %s (driver %s, hw version 0x%08x, %d cores), no shim\n", interface,
           info.node, info.driver_version, info.hw_version, info.cores);
    unsetenv("LD_PRELOAD");
    run(program, interface, "real");
  }
  if (real_device(other, &info)) {
    printf("tests-hw: REAL DEVICE: this board has %s (%s), not %s: SKIP (on a board tests-hw tests the board)\n",
           other, info.node, interface);
    return HW_SKIP;
  }
  if (shim && *shim) {
    printf("tests-hw: EMULATOR: no NPU node on this machine; %s through libork_emu_shim's fake /dev and sysfs\n",
           interface);
    setenv("LD_PRELOAD", shim, 1);
    run(program, interface, "emulator");
  }
  printf("tests-hw: no NPU node on this machine and no shim given: SKIP\n");
  return HW_SKIP;
}
