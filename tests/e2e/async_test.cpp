// Asynchronous jobs and batches (ork.h "Asynchronous jobs and batches") on cpu, emu-rknpu
// and emu-rocket: every cell of every C against the CPU reference, jobs in flight at once,
// completion order, replays with new A contents, strided and buffer tensors, jobs and
// blocking calls of one shape interleaved, and every
// misuse the header names (waiting twice, a closed device, a wide-K matmul in a batch,
// weights destroyed under a batch, a job released unwaited).
#include <gtest/gtest.h>

#include <cstring>
#include <deque>
#include <string>
#include <vector>

#include "lib/matmul/plan.h"
#include "lib/ref/oracle.h"
#include "lib/ref/random.h"
#include "ork/ork.h"
#include "tests/support/device_names.h"

namespace {

struct Weights {
  int64_t k, n;
  std::vector<int8_t> w;
  ork_weights* handle = nullptr;
};

std::vector<int32_t> async_reference(const std::vector<int8_t>& a, const Weights& w, int64_t m) {
  std::vector<int32_t> c(static_cast<size_t>(m * w.n));
  EXPECT_TRUE(ork::ref::matmul_int8(a, w.w, c, {m, w.k, w.n}).ok());
  return c;
}

ork_tensor async_host(void* p) {
  ork_tensor t{};
  t.host = p;
  return t;
}

// The batch of BatchRecordsOnceAndReplays: a layer's shapes (q, k, v into the columns of
// one concatenated buffer, then gate and up), A read from a buffer.
struct LayerBatch {
  static constexpr int64_t m = 3, qkv = 128 + 32 + 32;
  Weights *q = nullptr, *k = nullptr, *v = nullptr, *g = nullptr, *u = nullptr;
  ork_buffer *abuf = nullptr, *qkvbuf = nullptr;
  void *ap = nullptr, *qp = nullptr;
  std::vector<int32_t> gate = std::vector<int32_t>(m * 320), up = std::vector<int32_t>(m * 320);
  ork_batch* b = nullptr;
};

class Async : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { ASSERT_EQ(ork_device_open(GetParam().c_str(), &dev_), ORK_OK) << ork_last_error(); }
  void TearDown() override {
    for (auto& w : weights_) ork_weights_destroy(w.handle);
    ork_device_close(dev_);
  }
  Weights& add_weights(int64_t k, int64_t n, uint64_t seed) {
    Weights w{k, n, ork::ref::random_int8(k * n, seed)};
    EXPECT_EQ(ork_weights_create(dev_, ORK_DTYPE_INT8, k, n, w.w.data(), &w.handle), ORK_OK) << ork_last_error();
    weights_.push_back(std::move(w));
    return weights_.back();
  }
  void record_layer(LayerBatch& l);
  void replay(const LayerBatch& l, int rep);
  ork_device* dev_ = nullptr;
  std::deque<Weights> weights_;  // stable references
};

// Seven weights of a decode layer's shapes (scaled down), all in flight at once, waited in
// reverse order: each wait completes the jobs before it, every C exact.
TEST_P(Async, ManyInFlightCompleteInOrder) {
  const int64_t shapes[][2] = {{256, 256}, {256, 64}, {256, 64}, {256, 256}, {256, 512}, {256, 512}, {512, 256}};
  std::vector<Weights*> ws;
  for (int i = 0; i < 7; ++i) ws.push_back(&add_weights(shapes[i][0], shapes[i][1], 10 + i));
  for (int64_t m : {1, 9}) {
    std::vector<std::vector<int8_t>> a;
    std::vector<std::vector<int32_t>> c;
    std::vector<ork_job*> jobs;
    for (int i = 0; i < 7; ++i) {
      a.push_back(ork::ref::random_int8(m * ws[i]->k, 100 + i + m));
      c.emplace_back(static_cast<size_t>(m * ws[i]->n), -1);
    }
    for (int i = 0; i < 7; ++i) {
      ork_tensor ta = async_host(a[i].data()), tc = async_host(c[i].data());
      ork_job* j = nullptr;
      ASSERT_EQ(ork_matmul_submit(dev_, ws[i]->handle, &ta, m, &tc, nullptr, &j), ORK_OK) << ork_last_error();
      ASSERT_NE(j, nullptr);
      jobs.push_back(j);
      // A is read by the submit: overwriting it now must not change the result.
      std::memset(a[i].data(), 0x55, a[i].size());
    }
    for (int i = 6; i >= 0; --i) ASSERT_EQ(ork_job_wait(jobs[i], -1), ORK_OK) << ork_last_error();
    for (int i = 0; i < 7; ++i) {
      const auto want = async_reference(ork::ref::random_int8(m * ws[i]->k, 100 + i + m), *ws[i], m);
      EXPECT_EQ(c[i], want) << "weight " << i << " M " << m;
      ork_job_release(jobs[i]);
    }
  }
}

// The same weights twice in flight: the second submit completes the first (they share the
// context's buffers); both results exact.
TEST_P(Async, SameWeightsTwiceInFlight) {
  Weights& w = add_weights(192, 96, 3);
  auto a1 = ork::ref::random_int8(4 * 192, 1), a2 = ork::ref::random_int8(4 * 192, 2);
  std::vector<int32_t> c1(4 * 96), c2(4 * 96);
  ork_tensor t1 = async_host(a1.data()), t2 = async_host(a2.data()), u1 = async_host(c1.data()), u2 = async_host(c2.data());
  ork_job *j1 = nullptr, *j2 = nullptr;
  ASSERT_EQ(ork_matmul_submit(dev_, w.handle, &t1, 4, &u1, nullptr, &j1), ORK_OK) << ork_last_error();
  ASSERT_EQ(ork_matmul_submit(dev_, w.handle, &t2, 4, &u2, nullptr, &j2), ORK_OK) << ork_last_error();
  ASSERT_EQ(ork_job_wait(j2, -1), ORK_OK) << ork_last_error();
  ASSERT_EQ(ork_job_wait(j1, 0), ORK_OK) << ork_last_error();
  EXPECT_EQ(c1, async_reference(a1, w, 4));
  EXPECT_EQ(c2, async_reference(a2, w, 4));
  ork_job_release(j1);
  ork_job_release(j2);
}

// Blocking calls share their A and output BOs with every other blocking call of their shape
// (lib/matmul/run.h): jobs of that shape on other weights in flight around blocking calls,
// each with its own A, every C exact (the jobs are not completed by the blocking calls'
// shared buffers, nor the blocking calls corrupted by the jobs').
TEST_P(Async, OneShapeJobsAroundBlockingCalls) {
  constexpr int64_t m = 3;
  std::vector<Weights*> ws;
  for (int i = 0; i < 4; ++i) ws.push_back(&add_weights(256, 64, 40 + i));
  std::vector<std::vector<int8_t>> a;
  std::vector<std::vector<int32_t>> c;
  for (int i = 0; i < 8; ++i) {
    a.push_back(ork::ref::random_int8(m * 256, 300 + i));
    c.emplace_back(static_cast<size_t>(m * 64), -1);
  }
  std::vector<ork_job*> jobs;
  for (int i = 0; i < 8; ++i) {
    ork_tensor ta = async_host(a[i].data()), tc = async_host(c[i].data());
    if (i % 2 == 0) {  // a job on weights 0, 2, 0, 2, ...: in flight over the next blocking call
      ork_job* j = nullptr;
      ASSERT_EQ(ork_matmul_submit(dev_, ws[i % 4]->handle, &ta, m, &tc, nullptr, &j), ORK_OK) << ork_last_error();
      jobs.push_back(j);
    } else {
      ASSERT_EQ(ork_matmul(dev_, ws[i % 4]->handle, a[i].data(), m, c[i].data(), nullptr), ORK_OK) << ork_last_error();
    }
  }
  for (ork_job* j : jobs) ASSERT_EQ(ork_job_wait(j, -1), ORK_OK) << ork_last_error();
  for (int i = 0; i < 8; ++i) EXPECT_EQ(c[i], async_reference(a[i], *ws[i % 4], m)) << "call " << i;
  for (ork_job* j : jobs) ork_job_release(j);
}

// Waiting twice, releasing unwaited, bad arguments: each named.
TEST_P(Async, MisusesAreNamed) {
  Weights& w = add_weights(64, 32, 4);
  auto a = ork::ref::random_int8(2 * 64, 5);
  std::vector<int32_t> c(2 * 32, 7);
  ork_tensor ta = async_host(a.data()), tc = async_host(c.data());
  ork_job* j = nullptr;
  EXPECT_EQ(ork_matmul_submit(dev_, w.handle, &ta, 2, &tc, nullptr, nullptr), ORK_E_INVALID_ARGUMENT);
  EXPECT_NE(std::string(ork_last_error()).find("out is NULL"), std::string::npos) << ork_last_error();
  EXPECT_EQ(ork_matmul_submit(dev_, w.handle, &ta, 0, &tc, nullptr, &j), ORK_E_INVALID_ARGUMENT);
  EXPECT_EQ(j, nullptr);
  ASSERT_EQ(ork_matmul_submit(dev_, w.handle, &ta, 2, &tc, nullptr, &j), ORK_OK) << ork_last_error();
  EXPECT_EQ(ork_job_wait(j, -2), ORK_E_INVALID_ARGUMENT);
  EXPECT_NE(std::string(ork_last_error()).find("timeout_ms = -2"), std::string::npos) << ork_last_error();
  ASSERT_EQ(ork_job_wait(j, -1), ORK_OK) << ork_last_error();
  EXPECT_EQ(c, async_reference(a, w, 2));
  EXPECT_EQ(ork_job_wait(j, -1), ORK_E_INVALID_ARGUMENT);
  EXPECT_NE(std::string(ork_last_error()).find("already waited"), std::string::npos) << ork_last_error();
  ork_job_release(j);
  ork_job_release(nullptr);
  // Released unwaited: C is left as it was (on cpu the job was born complete, C written).
  std::vector<int32_t> c2(2 * 32, 7);
  ork_tensor tc2 = async_host(c2.data());
  ASSERT_EQ(ork_matmul_submit(dev_, w.handle, &ta, 2, &tc2, nullptr, &j), ORK_OK) << ork_last_error();
  ork_job_release(j);
  if (GetParam() != "cpu") {
    EXPECT_EQ(c2, std::vector<int32_t>(2 * 32, 7));
  }
  // The device still works after all of it.
  ASSERT_EQ(ork_matmul_submit(dev_, w.handle, &ta, 2, &tc2, nullptr, &j), ORK_OK) << ork_last_error();
  ASSERT_EQ(ork_job_wait(j, -1), ORK_OK) << ork_last_error();
  EXPECT_EQ(c2, async_reference(a, w, 2));
  ork_job_release(j);
}

// options.stats is per call: a batch's one job cannot fill it, so the add refuses it by
// name, and the batch (and the device) go on working without that matmul.
TEST_P(Async, BatchRefusesPerCallStats) {
  Weights& w = add_weights(64, 32, 21);
  auto a = ork::ref::random_int8(2 * 64, 22);
  std::vector<int32_t> c(2 * 32, 7);
  ork_tensor ta = async_host(a.data()), tc = async_host(c.data());
  ork_stats st{};
  st.struct_size = sizeof st;
  ork_matmul_options o{};
  o.struct_size = sizeof o;
  o.stats = &st;
  ork_batch* b = nullptr;
  ASSERT_EQ(ork_batch_create(dev_, &b), ORK_OK) << ork_last_error();
  EXPECT_EQ(ork_batch_add_matmul(b, w.handle, &ta, 2, &tc, &o), ORK_E_INVALID_ARGUMENT);
  EXPECT_NE(std::string(ork_last_error()).find("options.stats"), std::string::npos) << ork_last_error();
  ASSERT_EQ(ork_batch_add_matmul(b, w.handle, &ta, 2, &tc, nullptr), ORK_OK) << ork_last_error();
  ork_job* j = nullptr;
  ASSERT_EQ(ork_batch_submit(b, &j), ORK_OK) << ork_last_error();
  ASSERT_EQ(ork_job_wait(j, -1), ORK_OK) << ork_last_error();
  EXPECT_EQ(c, async_reference(a, w, 2));
  ork_job_release(j);
  ork_batch_destroy(b);
}

// A job outliving its device: the close waits for it; waiting after is refused, release works.
TEST_P(Async, JobAfterItsDeviceClosed) {
  ork_device* d = nullptr;
  ASSERT_EQ(ork_device_open(GetParam().c_str(), &d), ORK_OK) << ork_last_error();
  auto wv = ork::ref::random_int8(128 * 64, 8);
  ork_weights* w = nullptr;
  ASSERT_EQ(ork_weights_create(d, ORK_DTYPE_INT8, 128, 64, wv.data(), &w), ORK_OK) << ork_last_error();
  auto a = ork::ref::random_int8(3 * 128, 9);
  std::vector<int32_t> c(3 * 64);
  ork_tensor ta = async_host(a.data()), tc = async_host(c.data());
  ork_job* j = nullptr;
  ASSERT_EQ(ork_matmul_submit(d, w, &ta, 3, &tc, nullptr, &j), ORK_OK) << ork_last_error();
  ork_weights_destroy(w);  // completes the job first
  ork_device_close(d);
  EXPECT_EQ(ork_job_wait(j, -1), ORK_E_INVALID_ARGUMENT);
  EXPECT_NE(std::string(ork_last_error()).find("device was closed"), std::string::npos) << ork_last_error();
  ork_job_release(j);
}

// Records the layer's five matmuls into one batch.
void Async::record_layer(LayerBatch& l) {
  l.q = &add_weights(256, 128, 21);
  l.k = &add_weights(256, 32, 22);
  l.v = &add_weights(256, 32, 23);
  l.g = &add_weights(256, 320, 24);
  l.u = &add_weights(256, 320, 25);
  ASSERT_EQ(ork_buffer_create(dev_, l.m * 256, &l.abuf), ORK_OK) << ork_last_error();
  ASSERT_EQ(ork_buffer_create(dev_, l.m * l.qkv * 4, &l.qkvbuf), ORK_OK) << ork_last_error();
  ASSERT_EQ(ork_buffer_map(l.abuf, &l.ap), ORK_OK);
  ASSERT_EQ(ork_buffer_map(l.qkvbuf, &l.qp), ORK_OK);
  ASSERT_EQ(ork_batch_create(dev_, &l.b), ORK_OK) << ork_last_error();
  ork_tensor ta{};
  ta.buffer = l.abuf;
  int64_t col = 0;
  for (Weights* w : {l.q, l.k, l.v}) {
    ork_tensor tc{};
    tc.buffer = l.qkvbuf;
    tc.offset_bytes = static_cast<size_t>(col * 4);
    tc.row_stride = l.qkv;
    ASSERT_EQ(ork_batch_add_matmul(l.b, w->handle, &ta, l.m, &tc, nullptr), ORK_OK) << ork_last_error();
    col += w->n;
  }
  ork_tensor tg = async_host(l.gate.data()), tu = async_host(l.up.data());
  ASSERT_EQ(ork_batch_add_matmul(l.b, l.g->handle, &ta, l.m, &tg, nullptr), ORK_OK) << ork_last_error();
  ASSERT_EQ(ork_batch_add_matmul(l.b, l.u->handle, &ta, l.m, &tu, nullptr), ORK_OK) << ork_last_error();
}

// One replay with new A contents: every C exact.
void Async::replay(const LayerBatch& l, int rep) {
  auto a = ork::ref::random_int8(l.m * 256, 300 + rep);
  std::memcpy(l.ap, a.data(), a.size());
  ork_job* j = nullptr;
  ASSERT_EQ(ork_batch_submit(l.b, &j), ORK_OK) << ork_last_error();
  ASSERT_EQ(ork_job_wait(j, -1), ORK_OK) << ork_last_error();
  ork_job_release(j);
  const auto* cq = static_cast<const int32_t*>(l.qp);
  int64_t col = 0;
  for (Weights* w : {l.q, l.k, l.v}) {
    const auto want = async_reference(a, *w, l.m);
    for (int64_t r = 0; r < l.m; ++r)
      for (int64_t n = 0; n < w->n; ++n)
        ASSERT_EQ(cq[r * l.qkv + col + n], want[static_cast<size_t>(r * w->n + n)]) << "rep " << rep << " r " << r;
    col += w->n;
  }
  EXPECT_EQ(l.gate, async_reference(a, *l.g, l.m)) << "rep " << rep;
  EXPECT_EQ(l.up, async_reference(a, *l.u, l.m)) << "rep " << rep;
}

// The layer batch, replayed with new A contents several times: every C exact every time.
TEST_P(Async, BatchRecordsOnceAndReplays) {
  LayerBatch l;
  ASSERT_NO_FATAL_FAILURE(record_layer(l));
  for (int rep = 0; rep < 4; ++rep) {
    ASSERT_NO_FATAL_FAILURE(replay(l, rep));
  }
  ork_buffer *abuf = l.abuf, *qkvbuf = l.qkvbuf;
  ork_batch* b = l.b;
  Weights& u = *l.u;
  // A buffer a batch holds cannot be destroyed.
  EXPECT_EQ(ork_buffer_destroy(abuf), ORK_E_INVALID_ARGUMENT);
  ork_stats st{};
  st.struct_size = sizeof st;
  ASSERT_EQ(ork_device_get_stats(dev_, &st), ORK_OK);
  EXPECT_EQ(st.calls, 4u * 5u);
  if (GetParam() != "cpu") {
    EXPECT_EQ(st.context_builds, 5u);  // recorded once
    EXPECT_EQ(st.submits, 4u);         // one kernel job per submit
  }
  // A batch submitted twice without a wait: the second completes the first.
  ork_job *j1 = nullptr, *j2 = nullptr;
  ASSERT_EQ(ork_batch_submit(b, &j1), ORK_OK) << ork_last_error();
  ASSERT_EQ(ork_batch_submit(b, &j2), ORK_OK) << ork_last_error();
  EXPECT_EQ(ork_job_wait(j1, -1), ORK_OK) << ork_last_error();
  EXPECT_EQ(ork_job_wait(j2, -1), ORK_OK) << ork_last_error();
  ork_job_release(j1);
  ork_job_release(j2);
  // Weights destroyed under the batch: later submits are refused, naming why.
  ork_weights_destroy(u.handle);
  u.handle = nullptr;
  ork_job* j = nullptr;
  EXPECT_EQ(ork_batch_submit(b, &j), ORK_E_INVALID_ARGUMENT);
  EXPECT_NE(std::string(ork_last_error()).find("weights of the batch were destroyed"), std::string::npos)
      << ork_last_error();
  ork_batch_destroy(b);
  EXPECT_EQ(ork_buffer_destroy(abuf), ORK_OK) << ork_last_error();
  EXPECT_EQ(ork_buffer_destroy(qkvbuf), ORK_OK) << ork_last_error();
  EXPECT_EQ(ork_batch_submit(nullptr, &j), ORK_E_INVALID_ARGUMENT);
}

// fp16 weights with fp16 C, async and in a batch: exact against the oracle's rounding.
TEST_P(Async, Fp16JobAndBatch) {
  const int64_t m = 5, k = 96, n = 40;
  std::vector<uint16_t> wv(k * n), a(m * k);
  for (size_t i = 0; i < wv.size(); ++i) wv[i] = static_cast<uint16_t>(0x3000 + (i * 37) % 0x0c00);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<uint16_t>(0xb400 + (i * 53) % 0x0800);
  ork_weights* w = nullptr;
  ASSERT_EQ(ork_weights_create(dev_, ORK_DTYPE_FP16, k, n, wv.data(), &w), ORK_OK) << ork_last_error();
  std::vector<float> want(m * n), got(m * n);
  // The NPU's K-slices set the fp16 sum order (docs/dtypes.md "fp16"); one rule on every device.
  auto plan = ork::matmul::make_plan({1, k, n}, {.dtype = ork::matmul::DType::fp16, .cores = 1});
  ASSERT_TRUE(plan.ok());
  const int64_t slice_k = plan->slice_k;
  ASSERT_TRUE(ork::ref::matmul_fp16_sliced(a, wv, want, {m, k, n}, slice_k).ok());
  ork_tensor ta = async_host(a.data()), tc = async_host(got.data());
  ork_job* j = nullptr;
  ASSERT_EQ(ork_matmul_submit(dev_, w, &ta, m, &tc, nullptr, &j), ORK_OK) << ork_last_error();
  ASSERT_EQ(ork_job_wait(j, 1000), ORK_OK) << ork_last_error();
  ork_job_release(j);
  EXPECT_EQ(0, std::memcmp(got.data(), want.data(), got.size() * 4));
  std::vector<uint16_t> want16(m * n), got16(m * n, 0);
  ASSERT_TRUE(ork::ref::matmul_fp16_sliced_to_fp16(a, wv, want16, {m, k, n}, slice_k).ok());
  ork_matmul_options o{};
  o.struct_size = sizeof o;
  o.c_dtype = ORK_DTYPE_FP16;
  ork_batch* b = nullptr;
  ASSERT_EQ(ork_batch_create(dev_, &b), ORK_OK);
  ork_tensor tc16 = async_host(got16.data());
  ASSERT_EQ(ork_batch_add_matmul(b, w, &ta, m, &tc16, &o), ORK_OK) << ork_last_error();
  ASSERT_EQ(ork_batch_submit(b, &j), ORK_OK) << ork_last_error();
  ASSERT_EQ(ork_job_wait(j, -1), ORK_OK) << ork_last_error();
  ork_job_release(j);
  EXPECT_EQ(got16, want16);
  ork_batch_destroy(b);
  ork_weights_destroy(w);
}

INSTANTIATE_TEST_SUITE_P(Devices, Async, ::testing::Values("cpu", "emu-rknpu", "emu-rocket"),
                         [](const auto& info) { return ork::testing::device_test_name(info.param); });

}  // namespace
