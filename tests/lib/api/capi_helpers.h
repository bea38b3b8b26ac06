/* Shared helpers of the C API tests (CMocka). C11. */
#ifndef ORK_TESTS_LIB_API_CAPI_HELPERS_H
#define ORK_TESTS_LIB_API_CAPI_HELPERS_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "ork/ork.h"

/* Asserts `status == expected` and that ork_last_error() is non-empty and names `word` as a
 * whole word (so "A" matches "A is NULL" but not "ARGUMENT"). */
void expect_error(ork_status status, ork_status expected, const char* word);

/* The node libork's discovery must pick for `driver` ("rknpu" or "rocket"), found here
 * independently of the library: the lowest-numbered /dev/dri card node whose DRM driver
 * (drmGetVersion) is rknpu, else the lowest render node; for rocket the lowest
 * /dev/accel/accel* node. Returns 1 with the path in `node` and whether the node is the
 * emulator's (under its LD_PRELOAD shim), 0 when there is none. */
int npu_node(const char* driver, char* node, size_t size, int* emulated);

/* Opens `name` and fails the test when it does not open. */
ork_device* open_or_fail(const char* name);

/* Seeded int8 data (an LCG: deterministic on every platform). */
void fill_int8(int8_t* out, size_t count, uint32_t seed);

/* The obviously-correct loop: C[m][n] = sum_k A[m][k] * W[k][n], int32. */
void plain_matmul(const int8_t* a, const int8_t* w, int32_t* c, int64_t m, int64_t k, int64_t n);

/* Runs C = A x W on `device` with `options` (may be NULL) and compares with plain_matmul,
 * reporting the first bad cell. */
void check_matmul(ork_device* device, int64_t m, int64_t k, int64_t n,
                  const ork_matmul_options* options, uint32_t seed);

#endif
