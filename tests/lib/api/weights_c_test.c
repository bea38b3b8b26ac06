/* The engine-layout and packed-blob calls of ork.h from C (CMocka): N x K int8 weights with a
 * row stride against a plain loop, an export / import round trip across backends, and the
 * refusals a C program meets (stride smaller than a row, truncated header, corrupted payload,
 * a blob of another layout version, a too-small capacity), and a ggml Q4_0 block built by
 * hand (-8 codes, a negative scale) against a plain-loop dequantise, with its refusals. */
#include <stdlib.h>
#include <string.h>

#include "tests/lib/api/capi_helpers.h"

static const char* const kDevices[] = {"cpu", "emu-rknpu", "emu-rocket"};
#define DEVICE_COUNT 3
enum { M = 3, K = 70, N = 33, STRIDE = 75 };

/* Bitwise CRC-32 (IEEE, reflected 0xEDB88320): the test's own, to re-seal a patched header. */
static uint32_t crc32_plain(const uint8_t* p, size_t n) {
  uint32_t c = 0xffffffffu;
  for (size_t i = 0; i < n; ++i) {
    c ^= p[i];
    for (int b = 0; b < 8; ++b) c = (c & 1u) ? (c >> 1) ^ 0xedb88320u : c >> 1;
  }
  return ~c;
}

static void put32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = (uint8_t)(v >> (8 * i));
}

/* W[k][n] stored N x K, rows STRIDE apart; `dense` gets the K x N copy for the plain loop. */
static int8_t* make_n_by_k(int8_t* dense) {
  int8_t* nk = malloc((size_t)N * STRIDE);
  memset(nk, 0x5a, (size_t)N * STRIDE); /* junk in the gaps */
  fill_int8(dense, (size_t)K * N, 11);
  for (int k = 0; k < K; ++k)
    for (int n = 0; n < N; ++n) nk[n * STRIDE + k] = dense[k * N + n];
  return nk;
}

static ork_weights* create_ex(ork_device* dev, const int8_t* nk, int64_t stride, ork_status want) {
  ork_weights_desc d;
  memset(&d, 0, sizeof(d));
  d.struct_size = sizeof(d);
  d.dtype = ORK_DTYPE_INT8;
  d.k = K;
  d.n = N;
  d.layout = ORK_LAYOUT_N_BY_K;
  d.row_stride = stride;
  d.data = nk;
  ork_weights* w = NULL;
  assert_int_equal(ork_weights_create_ex(dev, &d, &w), want);
  return w;
}

static void check(ork_device* dev, const ork_weights* w, const int8_t* dense) {
  int8_t a[M * K];
  int32_t c[M * N], want[M * N];
  fill_int8(a, sizeof(a), 12);
  assert_int_equal(ork_matmul(dev, w, a, M, c, NULL), ORK_OK);
  plain_matmul(a, dense, want, M, K, N);
  assert_memory_equal(c, want, sizeof(c));
}

static void test_n_by_k_with_stride(void** state) {
  (void)state;
  int8_t dense[K * N];
  int8_t* nk = make_n_by_k(dense);
  for (int d = 0; d < DEVICE_COUNT; ++d) {
    ork_device* dev = open_or_fail(kDevices[d]);
    ork_weights* w = create_ex(dev, nk, STRIDE, ORK_OK);
    check(dev, w, dense);
    ork_weights_destroy(w);
    expect_error(ork_weights_create_ex(dev, NULL, &w), ORK_E_INVALID_ARGUMENT, "desc");
    ork_device_close(dev);
  }
  free(nk);
}

static void test_stride_smaller_than_row(void** state) {
  (void)state;
  int8_t dense[K * N];
  int8_t* nk = make_n_by_k(dense);
  ork_device* dev = open_or_fail("emu");
  ork_weights* w = create_ex(dev, nk, K - 1, ORK_E_INVALID_ARGUMENT);
  assert_null(w);
  expect_error(ORK_E_INVALID_ARGUMENT, ORK_E_INVALID_ARGUMENT, "row_stride");
  w = create_ex(dev, nk, STRIDE, ORK_OK); /* still usable */
  check(dev, w, dense);
  ork_weights_destroy(w);
  ork_device_close(dev);
  free(nk);
}

static uint8_t* export_blob(const ork_weights* w, size_t* size) {
  assert_int_equal(ork_weights_export_packed(w, NULL, 0, size), ORK_OK);
  uint8_t* b = malloc(*size);
  size_t got = 0;
  assert_int_equal(ork_weights_export_packed(w, b, *size - 1, &got), ORK_E_INVALID_ARGUMENT);
  assert_int_equal(got, *size);
  expect_error(ORK_E_INVALID_ARGUMENT, ORK_E_INVALID_ARGUMENT, "capacity");
  assert_int_equal(ork_weights_export_packed(w, b, *size, &got), ORK_OK);
  return b;
}

static void test_blob_round_trip_and_defects(void** state) {
  (void)state;
  int8_t dense[K * N];
  int8_t* nk = make_n_by_k(dense);
  for (int d = 0; d < DEVICE_COUNT; ++d) {
    ork_device* dev = open_or_fail(kDevices[d]);
    ork_weights* w = create_ex(dev, nk, STRIDE, ORK_OK);
    size_t size = 0;
    uint8_t* b = export_blob(w, &size);
    ork_weights_destroy(w);
    for (int e = 0; e < DEVICE_COUNT; ++e) { /* imported anywhere, the same products */
      ork_device* other = open_or_fail(kDevices[e]);
      ork_weights* w2 = NULL;
      assert_int_equal(ork_weights_import_packed(other, b, size, &w2), ORK_OK);
      check(other, w2, dense);
      ork_weights_destroy(w2);
      ork_device_close(other);
    }
    ork_weights* bad = NULL;
    expect_error(ork_weights_import_packed(dev, b, 20, &bad), ORK_E_INVALID_ARGUMENT, "truncated");
    assert_null(bad);
    b[size - 5] ^= 0x40;
    expect_error(ork_weights_import_packed(dev, b, size, &bad), ORK_E_INVALID_ARGUMENT, "corrupted");
    assert_non_null(strstr(ork_last_error(), "payload checksum mismatch"));
    b[size - 5] ^= 0x40;
    put32(b + 12, 99); /* layout version 99, header re-sealed */
    put32(b + 60, crc32_plain(b, 60));
    expect_error(ork_weights_import_packed(dev, b, size, &bad), ORK_E_INVALID_ARGUMENT, "version");
    assert_non_null(strstr(ork_last_error(), "layout version 99"));
    free(b);
    ork_device_close(dev);
  }
  free(nk);
}

/* Q4_0 by hand, K = 32, N = 2 (ggml's layout: N rows of one 18-byte block each): row 0 has
 * d = -0.5 (fp16 0xb800) and qs[j] = j | (15 - j) << 4, so codes 0..15 minus 8 (the -8 code
 * included); row 1 has d = 0.25 (0x3400) and every nibble 0 (all -8). */
static void make_q4_0(uint8_t b[36]) {
  memset(b, 0, 36);
  b[0] = 0x00, b[1] = 0xb8;
  for (int j = 0; j < 16; ++j) b[2 + j] = (uint8_t)(j | ((15 - j) << 4));
  b[18] = 0x00, b[19] = 0x34;
}

/* The plain-loop dequantise: value j < 16 from the low nibble of qs[j], j >= 16 from the high
 * nibble of qs[j - 16], (q - 8) * d. */
static double q4_0_value(const uint8_t* b, int k, int n) {
  const uint8_t* blk = b + 18 * n;
  const double d = n == 0 ? -0.5 : 0.25;
  const int q = k < 16 ? (blk[2 + k] & 0x0f) : (blk[2 + k - 16] >> 4);
  return (q - 8) * d;
}

static void test_ggml_q4_0_by_hand(void** state) {
  (void)state;
  uint8_t b[36];
  make_q4_0(b);
  float a[32 * 32], c[32 * 2];
  memset(a, 0, sizeof(a));
  for (int i = 0; i < 32; ++i) a[i * 32 + i] = 127.0f; /* one code of 127 per row, scale 1 */
  for (int d = 0; d < DEVICE_COUNT; ++d) {
    ork_device* dev = open_or_fail(kDevices[d]);
    ork_qweights* q = NULL;
    assert_int_equal(ork_qweights_import_ggml(dev, ORK_GGML_Q4_0, b, sizeof(b), 32, 2, &q), ORK_OK);
    assert_int_equal(ork_qweights_groups(q), 1);
    assert_int_equal(ork_qmatmul(dev, q, a, 32, c, NULL), ORK_OK);
    for (int k = 0; k < 32; ++k)
      for (int n = 0; n < 2; ++n) assert_true(c[k * 2 + n] == (float)(127.0 * q4_0_value(b, k, n)));
    assert_true(c[0] == 127.0f * 4.0f); /* code -8 times d = -0.5 */
    ork_qweights_destroy(q);
    ork_qweights* bad = NULL;
    expect_error(ork_qweights_import_ggml(dev, ORK_GGML_Q4_0, b, sizeof(b) - 18, 32, 2, &bad), ORK_E_INVALID_ARGUMENT,
                 "block");
    assert_null(bad);
    assert_non_null(strstr(ork_last_error(), "block count does not match K and N"));
    expect_error(ork_qweights_import_ggml(dev, ORK_GGML_Q4_0, b, sizeof(b), 40, 2, &bad), ORK_E_INVALID_ARGUMENT, "K");
    expect_error(ork_qweights_import_ggml(dev, 7, b, sizeof(b), 32, 2, &bad), ORK_E_INVALID_ARGUMENT, "type");
    ork_device_close(dev);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_n_by_k_with_stride),
      cmocka_unit_test(test_stride_smaller_than_row),
      cmocka_unit_test(test_blob_round_trip_and_defects),
      cmocka_unit_test(test_ggml_q4_0_by_hand),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
