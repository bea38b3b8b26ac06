/* ork.h compiled as C11 with -Wpedantic -Werror (tests/capi/meson.build): the public
 * header must be plain C. Reports what C sees, for test_header to compare with C++. */
#include <stddef.h>

#include "ork/ork.h"
#include "tests/capi/header_abi.h"

void header_abi_c(struct HeaderAbi* out) {
  out->api_version = ORK_API_VERSION;
  out->info_size = sizeof(ork_device_info);
  out->info_cores_offset = offsetof(ork_device_info, cores);
  out->options_size = sizeof(ork_matmul_options);
  out->options_mc_cap_offset = offsetof(ork_matmul_options, mc_cap);
  out->status_size = sizeof(ork_status);
  out->matmul = (void (*)(void))ork_matmul;
  out->open = (void (*)(void))ork_device_open;
}
