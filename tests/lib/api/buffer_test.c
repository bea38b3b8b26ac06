/* Device buffers and tensors (include/ork/ork.h "Device buffers and tensors"): create, map,
 * size, destroy; ork_matmul_t on buffers, at an offset and a row stride, every cell checked
 * against the plain loop; every bad buffer or tensor refused with a message naming it. */
#define _POSIX_C_SOURCE 200809L /* open, close */

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/lib/api/capi_helpers.h"

static const char* const kBackends[] = {"cpu", "emu", "emu-rocket"};
#define BACKENDS (sizeof(kBackends) / sizeof(kBackends[0]))

static void test_buffer_create_map_size_destroy(void** state) {
  (void)state;
  for (size_t b = 0; b < BACKENDS; ++b) {
    ork_device* dev = open_or_fail(kBackends[b]);
    ork_buffer* buf = NULL;
    assert_int_equal(ork_buffer_create(dev, 1000, &buf), ORK_OK);
    assert_non_null(buf);
    assert_int_equal(ork_buffer_size(buf), 1000);
    unsigned char* p = NULL;
    assert_int_equal(ork_buffer_map(buf, (void**)&p), ORK_OK);
    assert_non_null(p);
    for (size_t i = 0; i < 1000; ++i) assert_int_equal(p[i], 0); /* zero-filled */
    memset(p, 0xab, 1000);
    void* again = NULL;
    assert_int_equal(ork_buffer_map(buf, &again), ORK_OK);
    assert_ptr_equal(again, p); /* one mapping for the buffer's life */
    assert_int_equal(ork_buffer_destroy(buf), ORK_OK);
    assert_int_equal(ork_buffer_destroy(NULL), ORK_OK);
    assert_int_equal(ork_buffer_size(NULL), 0);
    ork_device_close(dev);
  }
}

static void test_buffer_bad_arguments(void** state) {
  (void)state;
  ork_device* dev = open_or_fail("emu");
  ork_buffer* buf = (ork_buffer*)&buf;
  expect_error(ork_buffer_create(dev, 16, NULL), ORK_E_INVALID_ARGUMENT, "out");
  expect_error(ork_buffer_create(NULL, 16, &buf), ORK_E_INVALID_ARGUMENT, "device");
  assert_null(buf);
  expect_error(ork_buffer_create(dev, 0, &buf), ORK_E_INVALID_ARGUMENT, "bytes");
  expect_error(ork_buffer_create(dev, (size_t)1 << 40, &buf), ORK_E_INVALID_ARGUMENT, "bytes");
  assert_null(buf);
  void* p = &p;
  expect_error(ork_buffer_map(NULL, &p), ORK_E_INVALID_ARGUMENT, "buffer");
  assert_null(p);
  assert_int_equal(ork_buffer_create(dev, 16, &buf), ORK_OK);
  expect_error(ork_buffer_map(buf, NULL), ORK_E_INVALID_ARGUMENT, "ptr");
  assert_int_equal(ork_buffer_destroy(buf), ORK_OK);
  ork_device_close(dev);
}

/* q/k/v of one layer: three weights, one A buffer, C written into the columns of one
 * concatenated M x (NQ + NK + NV) buffer (row_stride = its width, offset = the column start). */
static void test_qkv_into_one_buffer(void** state) {
  (void)state;
  enum { M = 3, K = 96, NQ = 64, NK = 32, NV = 40, W = NQ + NK + NV };
  const int64_t ns[3] = {NQ, NK, NV}, starts[3] = {0, NQ, NQ + NK};
  for (size_t b = 0; b < BACKENDS; ++b) {
    ork_device* dev = open_or_fail(kBackends[b]);
    int8_t* w[3];
    ork_weights* wt[3];
    for (int i = 0; i < 3; ++i) {
      w[i] = malloc((size_t)(K * ns[i]));
      fill_int8(w[i], (size_t)(K * ns[i]), 100u + (uint32_t)i);
      assert_int_equal(ork_weights_create(dev, ORK_DTYPE_INT8, K, ns[i], w[i], &wt[i]), ORK_OK);
    }
    ork_buffer *abuf = NULL, *cbuf = NULL;
    assert_int_equal(ork_buffer_create(dev, M * K, &abuf), ORK_OK);
    assert_int_equal(ork_buffer_create(dev, M * W * sizeof(int32_t), &cbuf), ORK_OK);
    int8_t* a = NULL;
    int32_t* c = NULL;
    assert_int_equal(ork_buffer_map(abuf, (void**)&a), ORK_OK);
    assert_int_equal(ork_buffer_map(cbuf, (void**)&c), ORK_OK);
    fill_int8(a, M * K, 7);
    const ork_tensor at = {NULL, abuf, 0, 0};
    for (int i = 0; i < 3; ++i) {
      const ork_tensor ct = {NULL, cbuf, (size_t)starts[i] * sizeof(int32_t), W};
      assert_int_equal(ork_matmul_t(dev, wt[i], &at, M, &ct, NULL), ORK_OK);
    }
    for (int i = 0; i < 3; ++i) {
      int32_t* want = malloc((size_t)(M * ns[i]) * sizeof(int32_t));
      plain_matmul(a, w[i], want, M, K, ns[i]);
      for (int64_t r = 0; r < M; ++r)
        for (int64_t n = 0; n < ns[i]; ++n) assert_int_equal(c[r * W + starts[i] + n], want[r * ns[i] + n]);
      free(want);
      ork_weights_destroy(wt[i]);
      free(w[i]);
    }
    assert_int_equal(ork_buffer_destroy(abuf), ORK_OK);
    assert_int_equal(ork_buffer_destroy(cbuf), ORK_OK);
    ork_device_close(dev);
  }
}

/* The A operand's placement errors of test_tensor_errors (A is m x k int8 in `abuf`, of
 * exactly m * k bytes; `a` a host copy): an offset that runs the operand past the end, one
 * past the end itself, and row strides that overrun, fall below the row length, or are
 * negative or huge. */
static void expect_offset_and_stride_errors(ork_device* dev, ork_weights* wt, ork_buffer* abuf, int8_t* a,
                                            int64_t k, int64_t m, const ork_tensor* ct) {
  /* An offset that runs the operand past the end (2 x 32 at offset 1 needs 65 bytes: the
   * message says so), and one past the end itself. */
  const ork_tensor a_off = {NULL, abuf, 1, 0}, a_far = {NULL, abuf, (size_t)-1, 0};
  expect_error(ork_matmul_t(dev, wt, &a_off, m, ct, NULL), ORK_E_INVALID_ARGUMENT, "A");
  assert_non_null(strstr(ork_last_error(), "65"));
  expect_error(ork_matmul_t(dev, wt, &a_far, m, ct, NULL), ORK_E_INVALID_ARGUMENT, "offset_bytes");
  /* A stride that overruns the buffer, a stride below the row length, a negative one. */
  const ork_tensor a_wide = {NULL, abuf, 0, k + 1}, a_narrow = {NULL, abuf, 0, k - 1}, a_neg = {NULL, abuf, 0, -1};
  expect_error(ork_matmul_t(dev, wt, &a_wide, m, ct, NULL), ORK_E_INVALID_ARGUMENT, "A");
  expect_error(ork_matmul_t(dev, wt, &a_narrow, m, ct, NULL), ORK_E_INVALID_ARGUMENT, "row_stride");
  expect_error(ork_matmul_t(dev, wt, &a_neg, m, ct, NULL), ORK_E_INVALID_ARGUMENT, "row_stride");
  const ork_tensor a_huge = {a, NULL, 0, INT64_MAX};
  expect_error(ork_matmul_t(dev, wt, &a_huge, m, ct, NULL), ORK_E_INVALID_ARGUMENT, "row_stride");
}

static void test_tensor_errors(void** state) {
  (void)state;
  enum { M = 2, K = 32, N = 16 };
  ork_device* dev = open_or_fail("emu");
  ork_device* other = open_or_fail("emu-rocket");
  int8_t w[K * N], a[M * K];
  int32_t c[M * N];
  fill_int8(w, sizeof(w), 1);
  fill_int8(a, sizeof(a), 2);
  ork_weights* wt = NULL;
  assert_int_equal(ork_weights_create(dev, ORK_DTYPE_INT8, K, N, w, &wt), ORK_OK);
  ork_buffer *abuf = NULL, *small = NULL, *foreign = NULL;
  assert_int_equal(ork_buffer_create(dev, M * K, &abuf), ORK_OK);
  assert_int_equal(ork_buffer_create(dev, M * N * 4 - 4, &small), ORK_OK);
  assert_int_equal(ork_buffer_create(other, M * N * 4, &foreign), ORK_OK);
  const ork_tensor at = {NULL, abuf, 0, 0}, ct = {c, NULL, 0, 0};

  expect_error(ork_matmul_t(dev, wt, NULL, M, &ct, NULL), ORK_E_INVALID_ARGUMENT, "A");
  expect_error(ork_matmul_t(dev, wt, &at, M, NULL, NULL), ORK_E_INVALID_ARGUMENT, "C");
  const ork_tensor neither = {NULL, NULL, 0, 0}, both = {c, small, 0, 0};
  expect_error(ork_matmul_t(dev, wt, &neither, M, &ct, NULL), ORK_E_INVALID_ARGUMENT, "neither");
  expect_error(ork_matmul_t(dev, wt, &at, M, &both, NULL), ORK_E_INVALID_ARGUMENT, "both");
  /* C too small: the message names C, the bytes needed (128) and the bytes given (124). */
  const ork_tensor c_small = {NULL, small, 0, 0};
  expect_error(ork_matmul_t(dev, wt, &at, M, &c_small, NULL), ORK_E_INVALID_ARGUMENT, "C");
  assert_non_null(strstr(ork_last_error(), "128"));
  assert_non_null(strstr(ork_last_error(), "124"));
  expect_offset_and_stride_errors(dev, wt, abuf, a, K, M, &ct);
  /* A buffer of another device. */
  const ork_tensor c_foreign = {NULL, foreign, 0, 0};
  expect_error(ork_matmul_t(dev, wt, &at, M, &c_foreign, NULL), ORK_E_INVALID_ARGUMENT, "device");
  /* int32 C at an offset that is not a multiple of 4 bytes. */
  ork_buffer* cbuf = NULL;
  assert_int_equal(ork_buffer_create(dev, M * N * 4 + 8, &cbuf), ORK_OK);
  const ork_tensor c_odd = {NULL, cbuf, 2, 0};
  expect_error(ork_matmul_t(dev, wt, &at, M, &c_odd, NULL), ORK_E_INVALID_ARGUMENT, "aligned");
  /* After all that the device still works, and ork_matmul is the dense host case. */
  int32_t c2[M * N], want[M * N];
  const ork_tensor ah = {a, NULL, 0, 0}, ch = {c2, NULL, 0, 0};
  assert_int_equal(ork_matmul_t(dev, wt, &ah, M, &ch, NULL), ORK_OK);
  assert_int_equal(ork_matmul(dev, wt, a, M, c, NULL), ORK_OK);
  plain_matmul(a, w, want, M, K, N);
  assert_memory_equal(c, want, sizeof(want));
  assert_memory_equal(c2, want, sizeof(want));
  ork_buffer_destroy(cbuf);
  ork_buffer_destroy(abuf);
  ork_buffer_destroy(small);
  ork_buffer_destroy(foreign);
  ork_weights_destroy(wt);
  ork_device_close(other);
  ork_device_close(dev);
}

/* A dma-buf exported by one emulated device imports into another (either interface): the
 * bytes are shared, and an activation written by one device's call is the next device's A. */
static void test_dmabuf_between_devices(void** state) {
  (void)state;
  enum { M = 2, K = 64, N = 32 };
  const char* pairs[][2] = {{"emu", "emu-rocket"}, {"emu-rocket", "emu"}, {"emu", "emu"}};
  for (size_t p = 0; p < 3; ++p) {
    ork_device* d1 = open_or_fail(pairs[p][0]);
    ork_device* d2 = open_or_fail(pairs[p][1]);
    ork_buffer *shared = NULL, *imported = NULL, *cbuf = NULL;
    assert_int_equal(ork_buffer_create(d1, M * K, &shared), ORK_OK);
    int8_t* a = NULL;
    assert_int_equal(ork_buffer_map(shared, (void**)&a), ORK_OK);
    fill_int8(a, M * K, 5); /* written before the export: kept */
    int fd = -1;
    assert_int_equal(ork_buffer_export_dmabuf(shared, &fd), ORK_OK);
    assert_true(fd >= 0);
    assert_int_equal(ork_buffer_import_dmabuf(d2, fd, M * K, &imported), ORK_OK);
    close(fd); /* the buffer holds its own */
    assert_int_equal(ork_buffer_size(imported), M * K);
    int8_t* view = NULL;
    assert_int_equal(ork_buffer_map(imported, (void**)&view), ORK_OK);
    assert_memory_equal(view, a, M * K);
    view[3] = 99; /* and back */
    assert_int_equal(a[3], 99);

    int8_t w[K * N];
    int32_t want[M * N];
    fill_int8(w, sizeof(w), 6);
    ork_weights* wt = NULL;
    assert_int_equal(ork_weights_create(d2, ORK_DTYPE_INT8, K, N, w, &wt), ORK_OK);
    assert_int_equal(ork_buffer_create(d2, M * N * 4, &cbuf), ORK_OK);
    const ork_tensor at = {NULL, imported, 0, 0}, ct = {NULL, cbuf, 0, 0};
    assert_int_equal(ork_matmul_t(d2, wt, &at, M, &ct, NULL), ORK_OK);
    int32_t* c = NULL;
    assert_int_equal(ork_buffer_map(cbuf, (void**)&c), ORK_OK);
    plain_matmul(a, w, want, M, K, N);
    assert_memory_equal(c, want, sizeof(want));
    /* The imported buffer belongs to d2: d1 refuses it. */
    ork_weights* w1 = NULL;
    assert_int_equal(ork_weights_create(d1, ORK_DTYPE_INT8, K, N, w, &w1), ORK_OK);
    int32_t host_c[M * N];
    const ork_tensor hc = {host_c, NULL, 0, 0};
    expect_error(ork_matmul_t(d1, w1, &at, M, &hc, NULL), ORK_E_INVALID_ARGUMENT, "device");
    ork_weights_destroy(w1);
    ork_weights_destroy(wt);
    assert_int_equal(ork_buffer_destroy(cbuf), ORK_OK);
    assert_int_equal(ork_buffer_destroy(imported), ORK_OK);
    assert_int_equal(ork_buffer_destroy(shared), ORK_OK);
    ork_device_close(d2);
    ork_device_close(d1);
  }
}

static void test_dmabuf_errors(void** state) {
  (void)state;
  ork_device* emu = open_or_fail("emu");
  ork_device* cpu = open_or_fail("cpu");
  ork_buffer *b = NULL, *out = (ork_buffer*)&out;
  assert_int_equal(ork_buffer_create(emu, 4096, &b), ORK_OK);
  int fd = 12345;
  expect_error(ork_buffer_export_dmabuf(NULL, &fd), ORK_E_INVALID_ARGUMENT, "buffer");
  assert_int_equal(fd, -1);
  expect_error(ork_buffer_export_dmabuf(b, NULL), ORK_E_INVALID_ARGUMENT, "fd");
  expect_error(ork_buffer_import_dmabuf(emu, -1, 4096, &out), ORK_E_INVALID_ARGUMENT, "fd");
  assert_null(out);
  expect_error(ork_buffer_import_dmabuf(emu, 0, 4096, NULL), ORK_E_INVALID_ARGUMENT, "out");
  expect_error(ork_buffer_import_dmabuf(NULL, 0, 4096, &out), ORK_E_INVALID_ARGUMENT, "device");
  const int plain = open("/dev/null", O_RDONLY);
  assert_true(plain >= 0);
  expect_error(ork_buffer_import_dmabuf(emu, plain, 4096, &out), ORK_E_INVALID_ARGUMENT, "dma-buf");
  close(plain);
  expect_error(ork_buffer_import_dmabuf(emu, 1000000, 4096, &out), ORK_E_INVALID_ARGUMENT, "descriptor");
  assert_int_equal(ork_buffer_export_dmabuf(b, &fd), ORK_OK);
  expect_error(ork_buffer_import_dmabuf(emu, fd, 4096, &out), ORK_E_INVALID_ARGUMENT, "already");
  ork_device* other = open_or_fail("emu-rocket");
  expect_error(ork_buffer_import_dmabuf(other, fd, 8192, &out), ORK_E_INVALID_ARGUMENT, "smaller");
  expect_error(ork_buffer_import_dmabuf(other, fd, 0, &out), ORK_E_INVALID_ARGUMENT, "bytes");
  expect_error(ork_buffer_import_dmabuf(cpu, fd, 4096, &out), ORK_E_UNSUPPORTED, "cpu");
  ork_buffer* host = NULL;
  assert_int_equal(ork_buffer_create(cpu, 64, &host), ORK_OK);
  expect_error(ork_buffer_export_dmabuf(host, &fd), ORK_E_UNSUPPORTED, "cpu");
  close(fd);
  ork_buffer_destroy(host);
  ork_buffer_destroy(b);
  ork_device_close(other);
  ork_device_close(cpu);
  ork_device_close(emu);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_buffer_create_map_size_destroy),
      cmocka_unit_test(test_buffer_bad_arguments),
      cmocka_unit_test(test_qkv_into_one_buffer),
      cmocka_unit_test(test_tensor_errors),
      cmocka_unit_test(test_dmabuf_between_devices),
      cmocka_unit_test(test_dmabuf_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
