/* Device facts and statistics through the C API (ork.h "Device facts and statistics"): the
 * memory query, cumulative and per-call statistics, reset, core_mask, and the struct_size
 * rules of the output structs (0 refused, smaller filled only as far as it goes). */
#include <string.h>

#include "tests/lib/api/capi_helpers.h"

enum { K = 64, N = 48, M = 2 };

static ork_weights* make_weights(ork_device* device, uint32_t seed) {
  int8_t w[K * N];
  fill_int8(w, sizeof w, seed);
  ork_weights* out = NULL;
  assert_int_equal(ork_weights_create(device, ORK_DTYPE_INT8, K, N, w, &out), ORK_OK);
  return out;
}

static void run(ork_device* device, ork_weights* w, const ork_matmul_options* o) {
  int8_t a[M * K];
  int32_t c[M * N];
  fill_int8(a, sizeof a, 3);
  assert_int_equal(ork_matmul(device, w, a, M, c, o), ORK_OK);
}

static void test_null_arguments_and_struct_size(void** state) {
  (void)state;
  ork_device* device = open_or_fail("emu");
  ork_memory_info info;
  ork_stats stats;
  memset(&info, 0, sizeof info);
  memset(&stats, 0, sizeof stats);
  expect_error(ork_device_memory(NULL, &info), ORK_E_INVALID_ARGUMENT, "device");
  expect_error(ork_device_memory(device, NULL), ORK_E_INVALID_ARGUMENT, "info");
  expect_error(ork_device_memory(device, &info), ORK_E_INVALID_ARGUMENT, "struct_size"); /* 0 */
  expect_error(ork_device_get_stats(NULL, &stats), ORK_E_INVALID_ARGUMENT, "device");
  expect_error(ork_device_get_stats(device, NULL), ORK_E_INVALID_ARGUMENT, "stats");
  expect_error(ork_device_get_stats(device, &stats), ORK_E_INVALID_ARGUMENT, "struct_size");
  stats.struct_size = 4; /* not even the header */
  expect_error(ork_device_get_stats(device, &stats), ORK_E_INVALID_ARGUMENT, "struct_size");
  expect_error(ork_device_reset_stats(NULL), ORK_E_INVALID_ARGUMENT, "device");
  ork_weights* w = make_weights(device, 1);
  ork_matmul_options o;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.stats = &stats; /* struct_size still 4 */
  int8_t a[M * K];
  int32_t c[M * N];
  fill_int8(a, sizeof a, 2);
  expect_error(ork_matmul(device, w, a, M, c, &o), ORK_E_INVALID_ARGUMENT, "struct_size");
  ork_weights_destroy(w);
  ork_device_close(device);
}

static void test_counts_after_calls_and_reset(void** state) {
  (void)state;
  const char* names[] = {"emu-rknpu", "emu-rocket", "cpu"};
  for (size_t d = 0; d < 3; ++d) {
    ork_device* device = open_or_fail(names[d]);
    ork_weights* w = make_weights(device, 5);
    for (int i = 0; i < 5; ++i) run(device, w, NULL);
    ork_stats s;
    memset(&s, 0xAB, sizeof s);
    s.struct_size = sizeof s;
    assert_int_equal(ork_device_get_stats(device, &s), ORK_OK);
    assert_int_equal(s.struct_size, sizeof s);
    assert_int_equal(s.calls, 5);
    assert_true(s.wall_ns > 0);
    if (strcmp(names[d], "cpu") == 0) {
      assert_int_equal(s.context_builds, 0); /* no device contexts, no transfers */
      assert_int_equal(s.bytes_to_device, 0);
      assert_true(s.device_ns > 0); /* the reference multiply */
      assert_int_equal(s.emulator_ns, 0);
    } else {
      /* The emulator's own arithmetic ran inside the calls (fast mode: in the submit). */
      assert_true(s.emulator_ns > 0);
      assert_true(s.emulator_ns < s.wall_ns);
      assert_int_equal(s.context_builds, 1); /* one (weights, M, mask) */
      assert_int_equal(s.context_hits, 4);
      assert_true(s.bytes_to_device >= 5 * 4096); /* the feature BO, page-rounded, each call */
      assert_true(s.bytes_from_device >= 5 * 4096);
      assert_true(s.submits >= 5);
      assert_int_equal(s.weight_cache_misses > 0, 1);
      assert_int_equal(s.weight_cache_hits > 0, 1); /* calls 2..5 find the prepared block */
      if (strcmp(names[d], "emu-rocket") == 0) {
        assert_int_equal(s.device_unknown_calls, 5); /* the rocket uAPI reports no time */
        assert_int_equal(s.device_ns, 0);
      } else {
        assert_int_equal(s.device_unknown_calls, 0);
        assert_true(s.device_ns > 0); /* the emulator's modelled time */
      }
    }
    assert_int_equal(ork_device_reset_stats(device), ORK_OK);
    assert_int_equal(ork_device_get_stats(device, &s), ORK_OK);
    assert_int_equal(s.calls, 0);
    assert_int_equal(s.wall_ns, 0);
    assert_int_equal(s.context_hits, 0);
    run(device, w, NULL);
    assert_int_equal(ork_device_get_stats(device, &s), ORK_OK);
    assert_int_equal(s.calls, 1);
    ork_weights_destroy(w);
    ork_device_close(device);
  }
}

static void test_per_call_stats_and_smaller_struct_size(void** state) {
  (void)state;
  ork_device* device = open_or_fail("emu");
  ork_weights* w = make_weights(device, 9);
  ork_stats call;
  memset(&call, 0, sizeof call);
  call.struct_size = sizeof call;
  ork_matmul_options o;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.stats = &call;
  run(device, w, &o);
  assert_int_equal(call.calls, 1);
  assert_int_equal(call.context_builds, 1);
  run(device, w, &o);
  assert_int_equal(call.calls, 1); /* this call's figures, not the totals */
  assert_int_equal(call.context_builds, 0);
  assert_int_equal(call.context_hits, 1);
  assert_true(call.wall_ns >= call.pack_ns + call.unpack_ns);
  /* An older caller's struct: only the fields that fit are written. */
  ork_stats small;
  memset(&small, 0xCD, sizeof small);
  small.struct_size = (uint32_t)offsetof(ork_stats, submit_ns);
  assert_int_equal(ork_device_get_stats(device, &small), ORK_OK);
  assert_int_equal(small.struct_size, offsetof(ork_stats, submit_ns));
  assert_int_equal(small.calls, 2);
  const unsigned char* tail = (const unsigned char*)&small + offsetof(ork_stats, submit_ns);
  for (size_t i = 0; i < sizeof small - offsetof(ork_stats, submit_ns); ++i) assert_int_equal(tail[i], 0xCD);
  /* An older caller's options (API 1 size): no stats pointer read, no core mask. */
  ork_matmul_options old;
  memset(&old, 0xEE, sizeof old);
  old.struct_size = (uint32_t)offsetof(ork_matmul_options, core_mask);
  old.cores = 0;
  old.mc_cap = 0;
  old.a_dtype = 0;
  old.c_dtype = 0;
  run(device, w, &old);
  ork_weights_destroy(w);
  ork_device_close(device);
}

static void test_memory_query(void** state) {
  (void)state;
  const char* names[] = {"emu-rknpu", "emu-rocket"};
  for (size_t d = 0; d < 2; ++d) {
    ork_device* device = open_or_fail(names[d]);
    ork_weights* first = make_weights(device, 3);
    run(device, first, NULL); /* buffers made on the first submit (rknpu's task array) exist */
    ork_memory_info before, after;
    memset(&before, 0, sizeof before);
    before.struct_size = sizeof before;
    assert_int_equal(ork_device_memory(device, &before), ORK_OK);
    assert_int_equal(before.exact, 1); /* the fake kernel's own window */
    assert_true(before.window_bytes > ((uint64_t)4 << 30) - (1 << 20));
    assert_true(before.window_bytes <= (uint64_t)4 << 30);
    ork_weights* w = make_weights(device, 4);
    run(device, w, NULL);
    after = before;
    assert_int_equal(ork_device_memory(device, &after), ORK_OK);
    assert_true(after.bytes_resident >= before.bytes_resident + (uint64_t)K * N); /* weights + a context */
    assert_true(after.context_bytes > 0);
    assert_true(after.window_free_bytes <= after.window_bytes);
    assert_true(after.window_free_bytes + after.bytes_resident <= after.window_bytes);
    assert_true(after.window_free_bytes < before.window_free_bytes);
    assert_true(after.largest_allocation_bytes <= after.window_free_bytes);
    assert_true(after.largest_allocation_bytes > 0);
    ork_weights_destroy(w);
    ork_memory_info gone;
    memset(&gone, 0, sizeof gone);
    gone.struct_size = sizeof gone;
    assert_int_equal(ork_device_memory(device, &gone), ORK_OK);
    assert_int_equal(gone.bytes_resident, before.bytes_resident); /* weights and contexts freed */
    assert_int_equal(gone.window_free_bytes, before.window_free_bytes);
    ork_weights_destroy(first);
    ork_device_close(device);
  }
  ork_device* cpu = open_or_fail("cpu");
  ork_weights* w = make_weights(cpu, 4);
  ork_memory_info m;
  memset(&m, 0, sizeof m);
  m.struct_size = sizeof m;
  assert_int_equal(ork_device_memory(cpu, &m), ORK_OK);
  assert_true(m.bytes_resident >= (uint64_t)K * N); /* the packed host copy */
  assert_int_equal(m.window_free_bytes, 0);
  assert_true(m.largest_allocation_bytes > 0);
  ork_weights_destroy(w);
  assert_int_equal(ork_device_memory(cpu, &m), ORK_OK);
  assert_int_equal(m.bytes_resident, 0);
  ork_device_close(cpu);
}

static void test_core_mask_checked_and_exact(void** state) {
  (void)state;
  const char* names[] = {"emu-rknpu", "emu-rocket"};
  for (size_t d = 0; d < 2; ++d) {
    ork_device* device = open_or_fail(names[d]);
    for (uint32_t mask = 1; mask <= 7; ++mask) {
      ork_matmul_options o;
      memset(&o, 0, sizeof o);
      o.struct_size = sizeof o;
      o.core_mask = mask;
      check_matmul(device, 64, 512, 96, &o, 20 + mask);
    }
    ork_weights* w = make_weights(device, 6);
    int8_t a[M * K];
    int32_t c[M * N];
    fill_int8(a, sizeof a, 1);
    ork_matmul_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.core_mask = 0x8;
    expect_error(ork_matmul(device, w, a, M, c, &o), ORK_E_INVALID_ARGUMENT, "0x8");
    o.core_mask = 0x81;
    expect_error(ork_matmul(device, w, a, M, c, &o), ORK_E_INVALID_ARGUMENT, "core_mask");
    o.core_mask = 0x3;
    o.cores = 3;
    expect_error(ork_matmul(device, w, a, M, c, &o), ORK_E_INVALID_ARGUMENT, "core_mask");
    o.cores = 2;
    assert_int_equal(ork_matmul(device, w, a, M, c, &o), ORK_OK);
    ork_weights_destroy(w);
    ork_device_close(device);
  }
  ork_device* cpu = open_or_fail("cpu");
  ork_matmul_options o;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.core_mask = 1;
  check_matmul(cpu, 3, 64, 48, &o, 2);
  ork_weights* w = make_weights(cpu, 6);
  int8_t a[M * K];
  int32_t c[M * N];
  fill_int8(a, sizeof a, 1);
  /* The cpu device takes the NPU's masks (each core a host thread, the same bytes) and
   * refuses a bit beyond the third core as the NPU does. */
  o.core_mask = 0x6;
  check_matmul(cpu, 3, 64, 48, &o, 2);
  o.core_mask = 0x8;
  expect_error(ork_matmul(cpu, w, a, M, c, &o), ORK_E_INVALID_ARGUMENT, "0x8");
  ork_weights_destroy(w);
  ork_device_close(cpu);
}

/* One cpu call on `threads` requested (cores, or a core_mask when mask != 0): its cpu_threads. */
static uint64_t call_threads(ork_device* device, ork_weights* w, int32_t cores, uint32_t mask) {
  enum { WN = 256 }; /* >= 3 kernel panels on every tier, so 3 threads are not capped */
  int8_t a[M * K];
  int32_t c[M * WN];
  fill_int8(a, sizeof a, 7);
  ork_stats call;
  memset(&call, 0xAB, sizeof call);
  call.struct_size = sizeof call;
  ork_matmul_options o;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.cores = cores;
  o.core_mask = mask;
  o.stats = &call;
  assert_int_equal(ork_matmul(device, w, a, M, c, &o), ORK_OK);
  assert_int_equal(call.struct_size, sizeof call);
  return call.cpu_threads;
}

/* API 5's cpu_threads: the cpu device runs `cores` (or the mask's bits) as host threads and
 * says so per call; the totals sum them; the NPU backends report 0. */
static void test_cpu_threads_reported(void** state) {
  (void)state;
  ork_device* cpu = open_or_fail("cpu");
  int8_t wv[K * 256];
  fill_int8(wv, sizeof wv, 8);
  ork_weights* w = NULL;
  assert_int_equal(ork_weights_create(cpu, ORK_DTYPE_INT8, K, 256, wv, &w), ORK_OK);
  assert_int_equal(ork_device_reset_stats(cpu), ORK_OK);
  assert_int_equal(call_threads(cpu, w, 1, 0), 1);
  assert_int_equal(call_threads(cpu, w, 2, 0), 2);
  assert_int_equal(call_threads(cpu, w, 3, 0), 3);
  assert_int_equal(call_threads(cpu, w, 0, 0x5), 2);
  const uint64_t chosen = call_threads(cpu, w, 0, 0); /* as the shape needs */
  assert_true(chosen >= 1);
  ork_stats total;
  memset(&total, 0, sizeof total);
  total.struct_size = sizeof total;
  assert_int_equal(ork_device_get_stats(cpu, &total), ORK_OK);
  assert_int_equal(total.calls, 5);
  assert_int_equal(total.cpu_threads, 1 + 2 + 3 + 2 + chosen);
  ork_weights_destroy(w);
  ork_device_close(cpu);
  ork_device* emu = open_or_fail("emu");
  ork_weights* we = NULL;
  assert_int_equal(ork_weights_create(emu, ORK_DTYPE_INT8, K, 256, wv, &we), ORK_OK);
  assert_int_equal(call_threads(emu, we, 3, 0), 0); /* no host multiply on an NPU device */
  ork_weights_destroy(we);
  ork_device_close(emu);
}

/* One ork_qmatmul on `cores` (0: as the shape needs): its cpu_threads. */
static uint64_t qcall_threads(ork_device* device, const ork_qweights* q, int32_t cores, int32_t bits) {
  enum { QN = 256 };
  float a[M * K], c[M * QN];
  for (int i = 0; i < M * K; ++i) a[i] = (float)(i % 13) - 6.0f;
  ork_stats call;
  memset(&call, 0, sizeof call);
  call.struct_size = sizeof call;
  ork_qmatmul_options o;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.activation_bits = bits;
  o.cores = cores;
  o.stats = &call;
  assert_int_equal(ork_qmatmul(device, q, a, M, c, &o), ORK_OK);
  return call.cpu_threads;
}

/* The quantised modes on the cpu device take the cores option as host threads too, per-channel
 * and per-group, 8- and 4-bit activations (ggml's set_n_threads reaches them this way). */
static void test_cpu_qmatmul_threads_follow_cores(void** state) {
  (void)state;
  ork_device* cpu = open_or_fail("cpu");
  float w[K * 256];
  for (int i = 0; i < K * 256; ++i) w[i] = (float)(i % 29) / 7.0f - 2.0f;
  for (int32_t group = 0; group <= 32; group += 32) {
    ork_quant_options qo = {sizeof qo, 4, group};
    ork_qweights* q = NULL;
    assert_int_equal(ork_qweights_create(cpu, w, K, 256, &qo, &q), ORK_OK);
    for (int32_t bits = 4; bits <= 8; bits += 4) {
      assert_int_equal(qcall_threads(cpu, q, 1, bits), 1);
      assert_int_equal(qcall_threads(cpu, q, 2, bits), 2);
      assert_int_equal(qcall_threads(cpu, q, 3, bits), 3);
      assert_true(qcall_threads(cpu, q, 0, bits) >= 1);
    }
    ork_qweights_destroy(q);
  }
  ork_device_close(cpu);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_null_arguments_and_struct_size),
      cmocka_unit_test(test_counts_after_calls_and_reset),
      cmocka_unit_test(test_per_call_stats_and_smaller_struct_size),
      cmocka_unit_test(test_memory_query),
      cmocka_unit_test(test_core_mask_checked_and_exact),
      cmocka_unit_test(test_cpu_threads_reported),
      cmocka_unit_test(test_cpu_qmatmul_threads_follow_cores),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
