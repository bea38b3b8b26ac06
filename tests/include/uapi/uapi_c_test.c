/* The uAPI headers compile as C11 (their _Static_asserts run here) and agree at run time. */
#include <stdio.h>

#include "uapi/rknpu_ioctl.h"
#include "uapi/rocket_accel.h"
#include "uapi/dma_buf.h"

int main(void) {
  int bad = 0;
  bad |= sizeof(struct rknpu_submit) != 104;
  bad |= sizeof(struct rknpu_task) != 40;
  bad |= sizeof(struct drm_rocket_job) != 40;
  bad |= DRM_IOCTL_RKNPU_SUBMIT != 0xC0686441u;
  bad |= DRM_IOCTL_ROCKET_CREATE_BO != 0xC0186440u;
  if (bad) fprintf(stderr, "uapi layout differs when compiled as C\n");
  return bad;
}
