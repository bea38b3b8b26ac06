/* hw_run: runs one tests-hw program against the board when there is one, else against the
 * emulated NPU through the emulator's LD_PRELOAD shim.
 *
 *   hw_run [--shim PRELOAD] INTERFACE PROGRAM [ARGS...]      INTERFACE = rknpu | rocket
 *
 * It opens INTERFACE through libork's real discovery in this process (never under the shim):
 *  - a real (not emulated) device: PROGRAM runs on it with no shim (LD_PRELOAD removed);
 *  - no device of INTERFACE but a real device of the other interface (a board runs one NPU
 *    driver at a time): SKIP (77), saying which interface the board has;
 *  - an NPU node that libork cannot open (EACCES without the video/render group, a driver
 *    version libork refuses, ...): exit 1 naming the node and the error. Opening fails the
 *    same way ("no device found") when a node exists but cannot be opened, so the nodes are
 *    looked at here (npu_node): one whose DRM driver is rknpu or rocket, or one this user
 *    cannot open at all (it may be the NPU), is an NPU node. Falling through to the shim
 *    then would test the emulator on a board and report it as a pass. An open that fails
 *    with anything but ORK_E_NO_DEVICE is the same failure;
 *  - no NPU node at all and --shim given: PROGRAM runs with LD_PRELOAD=PRELOAD, where the
 *    shim's fake /dev and sysfs are found by the same discovery code;
 *  - otherwise SKIP.
 * Its first line of output says which (REAL DEVICE or EMULATOR). PROGRAM gets
 * ORK_DEVICE=INTERFACE and ORK_HW_EXPECT=real|emulator, and fails if the device it opens is
 * not what was announced (hw_common.h). Exit status: PROGRAM's, or 77 (skip), 2 (usage),
 * 1 (an NPU node libork cannot open). */
#define _POSIX_C_SOURCE 200809L /* setenv, unsetenv, execv */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ork/ork.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xf86drm.h>

#define HW_SKIP 77
#define HW_NO_OPEN 1

/* What a node under `dir` says about the NPU: 1 (an NPU node, or one that cannot be opened to
 * tell; *why says which), else 0. Gone nodes (ENOENT, ENXIO, ENODEV) and the emulator's own
 * (the shim's "[ork-emu]" description) are not NPU nodes. */
static int npu_node(const char* path, char* why, size_t cap) {
  int fd = open(path, O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT || errno == ENXIO || errno == ENODEV) return 0;
    snprintf(why, cap, "%s exists but cannot be opened (%s); it may be the NPU", path, strerror(errno));
    return 1;
  }
  drmVersionPtr v = drmGetVersion(fd);
  int npu = v && v->name && (strcmp(v->name, "rknpu") == 0 || strcmp(v->name, "rocket") == 0) &&
            !(v->desc && strstr(v->desc, "[ork-emu]"));
  if (npu) snprintf(why, cap, "%s is DRM driver '%s'", path, v->name);
  if (v) drmFreeVersion(v);
  close(fd);
  return npu;
}

/* 1 if a node of /dev/dri (card*, renderD*) or /dev/accel (accel*) is an NPU node. */
static int npu_node_present(char* why, size_t cap) {
  static const char* const dirs[] = {"/dev/dri", "/dev/accel"};
  int found = 0;
  for (size_t i = 0; i < 2 && !found; ++i) {
    DIR* d = opendir(dirs[i]);
    if (!d) continue;
    for (struct dirent* e; !found && (e = readdir(d)) != NULL;) {
      if (strncmp(e->d_name, "card", 4) != 0 && strncmp(e->d_name, "renderD", 7) != 0 &&
          strncmp(e->d_name, "accel", 5) != 0)
        continue;
      char path[300];
      snprintf(path, sizeof path, "%s/%s", dirs[i], e->d_name);
      found = npu_node(path, why, cap);
    }
    closedir(d);
  }
  return found;
}

/* 1 if `name` opens as a real device here (its info in *info), else 0; a failed open's
 * status and message are kept in *status and `error` when given. */
static int real_device(const char* name, ork_device_info* info, ork_status* status, char* error, size_t cap) {
  ork_device* dev = NULL;
  const ork_status st = ork_device_open(name, &dev);
  if (status) *status = st;
  if (st != ORK_OK) {
    if (error) snprintf(error, cap, "%s", ork_last_error());
    return 0;
  }
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
  char error[512] = "";
  ork_status status = ORK_OK;
  if (real_device(interface, &info, &status, error, sizeof error)) {
    printf("tests-hw: REAL DEVICE: %s on %s (driver %s, hw version 0x%08x, %d cores), no shim\n", interface,
           info.node, info.driver_version, info.hw_version, info.cores);
    unsetenv("LD_PRELOAD");
    run(program, interface, "real");
  }
  if (real_device(other, &info, NULL, NULL, 0)) {
    printf("tests-hw: REAL DEVICE: this board has %s (%s), not %s: SKIP (on a board tests-hw tests the board)\n",
           other, info.node, interface);
    return HW_SKIP;
  }
  char why[400];
  /* Only "no device" lets the shim run: any other failure of the open is the board's. */
  if (status != ORK_OK && status != ORK_E_NO_DEVICE) snprintf(why, sizeof why, "the open failed with status %d", (int)status);
  if ((status != ORK_OK && status != ORK_E_NO_DEVICE) || npu_node_present(why, sizeof why)) {
    printf("tests-hw: NPU NODE NOT USABLE: %s; libork's open of %s: %s. Not testing the emulator "
           "on a board: fix the access (docs/board.md) and run again\n",
           why, interface, error[0] ? error : "succeeded on the emulator only");
    return HW_NO_OPEN;
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
