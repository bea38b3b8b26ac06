// The CORE's prepared-weight cache (driver/emu/npu/weight_cache.h) and what it keys on
// (DeviceMemory::origin): a hit only ever returns weights prepared from the same bytes.
// Every task result is compared with a plain loop, or with the same task run on memory the
// cache cannot key on (untracked BOs), byte for byte.
#include <memory>

#include "driver/emu/npu/weight_cache.h"
#include "tests/driver/emu/npu/npu_fixture.h"

namespace ork::emu::testing {
namespace {

struct FakePrepared final : PreparedInt8 {
  explicit FakePrepared(size_t b) : n(b) {}
  size_t n;
  size_t bytes() const override { return n; }
};

WeightKey key(uint64_t serial, uint64_t generation, uint64_t offset = 0) {
  return {serial, generation, offset, 64, 32, NpuType::int8, &builtin_int8_engine()};
}

TEST(WeightCache, EvictsTheLeastRecentlyUsedPastItsCapacity) {
  WeightCache c;
  c.set_capacity(250);
  c.insert(key(1, 0), std::make_shared<FakePrepared>(100));
  c.insert(key(2, 0), std::make_shared<FakePrepared>(100));
  ASSERT_NE(c.find(key(1, 0)), nullptr);  // 1 is now the most recent
  c.insert(key(3, 0), std::make_shared<FakePrepared>(100));  // 300 > 250: 2 goes
  EXPECT_NE(c.find(key(1, 0)), nullptr);
  EXPECT_EQ(c.find(key(2, 0)), nullptr);
  EXPECT_NE(c.find(key(3, 0)), nullptr);
  EXPECT_EQ(c.stats().entries, 2u);
  EXPECT_EQ(c.stats().bytes, 200u);
  c.insert(key(4, 0), std::make_shared<FakePrepared>(1000));  // bigger than the cap: not kept
  EXPECT_EQ(c.find(key(4, 0)), nullptr);
  EXPECT_LE(c.stats().bytes, 250u);
}

TEST(WeightCache, EveryKeyFieldMatters) {
  WeightCache c;
  c.insert(key(7, 3, 64), std::make_shared<FakePrepared>(10));
  EXPECT_NE(c.find(key(7, 3, 64)), nullptr);
  EXPECT_EQ(c.find(key(8, 3, 64)), nullptr);  // another BO
  EXPECT_EQ(c.find(key(7, 4, 64)), nullptr);  // the BO written since
  EXPECT_EQ(c.find(key(7, 3, 0)), nullptr);   // another offset
  WeightKey k = key(7, 3, 64);
  k.kt = 96;
  EXPECT_EQ(c.find(k), nullptr);
  k = key(7, 3, 64);
  k.type = NpuType::int4;  // the same bytes read as nibbles
  EXPECT_EQ(c.find(k), nullptr);
  k = key(7, 3, 64);
  k.engine = nullptr;  // prepared for another engine
  EXPECT_EQ(c.find(k), nullptr);
}

TEST(WeightCache, ForgetAndNewGenerationsDropEntries) {
  WeightCache c;
  c.insert(key(1, 0, 0), std::make_shared<FakePrepared>(10));
  c.insert(key(1, 0, 4096), std::make_shared<FakePrepared>(10));
  c.insert(key(2, 0), std::make_shared<FakePrepared>(10));
  c.insert(key(1, 1, 0), std::make_shared<FakePrepared>(10));  // BO 1 written: its gen-0 entries go
  EXPECT_EQ(c.stats().entries, 2u);
  EXPECT_EQ(c.find(key(1, 0, 4096)), nullptr);
  c.forget(1);
  EXPECT_EQ(c.stats().entries, 1u);
  EXPECT_NE(c.find(key(2, 0)), nullptr);
  EXPECT_EQ(c.stats().bytes, 10u);
}

TEST(DeviceMemoryOrigin, OnlyTrackedBosHaveOneAndWritesBumpIt) {
  Device dev;
  Bo& plain = dev.alloc(4096);
  Bo& tracked = dev.alloc(4096, 0, /*tracked=*/true);
  EXPECT_FALSE(dev.mem.origin(plain.iova, 16).has_value());
  auto o = dev.mem.origin(tracked.iova + 32, 64);
  ASSERT_TRUE(o.has_value());
  EXPECT_EQ(o->offset, 32u);
  EXPECT_FALSE(dev.mem.origin(tracked.iova + 4090, 64).has_value());  // not inside the BO
  const uint64_t g0 = o->generation;
  uint8_t byte = 0;
  ASSERT_TRUE(dev.mem.read(tracked.iova, &byte, 1));
  ASSERT_NE(dev.mem.span(tracked.iova, 16), nullptr);
  EXPECT_EQ(dev.mem.origin(tracked.iova, 1)->generation, g0);  // reads change nothing
  ASSERT_TRUE(dev.mem.write(tracked.iova + 100, &byte, 1));
  EXPECT_EQ(dev.mem.origin(tracked.iova, 1)->generation, g0 + 1);
  ASSERT_NE(dev.mem.span_for_write(tracked.iova, 16), nullptr);
  dev.mem.note_write(tracked.iova + 4000);
  EXPECT_EQ(dev.mem.origin(tracked.iova, 1)->generation, g0 + 3);
  // A BO mapped again at the same IOVA is another BO: a new serial, never an old entry's.
  const uint64_t serial = o->serial;
  dev.mem.unmap(tracked.iova);
  dev.mem.map(tracked.iova, tracked.bytes.data(), tracked.bytes.size(), true);
  EXPECT_NE(dev.mem.origin(tracked.iova, 1)->serial, serial);
}

// One int8 task of mc rows x N columns over K from row m0 of A; C has M rows.
TaskSpec int8_task(const Bo& A, const Bo& B, const Bo& C, uint32_t M, uint32_t m0, uint32_t mc, uint32_t K,
                   uint32_t N) {
  TaskSpec t;
  t.mc = mc;
  t.kt = K;
  t.nt = N;
  t.a = A.iova + m0 * 16;
  t.b = B.iova;
  t.c = C.iova + m0 * 16;
  t.a_surf = t.c_surf = M;
  k_reduction_banks(t);
  return t;
}

struct Int8Problem {
  uint32_t M = 96, K = 128, N = 64;
  std::vector<int8_t> a = random_i8(96 * 128, 5), b = random_i8(128 * 64, 6);
};

// A, B and C of `p` in BOs of their own device (tracked or not).
struct ProblemBos {
  ProblemBos(const Int8Problem& p, bool tracked) : bos(alloc_int8(dev, p.a, p.b, p.M, p.K, p.N, 0xa5, tracked)) {}
  Device dev;  // declared first: the BOs below live in it
  Int8Bos bos;
  Bo &A = bos.A, &B = bos.B, &C = bos.C;
};

void expect_product(const std::vector<uint8_t>& c, const Int8Problem& p, const std::vector<int8_t>& b) {
  const auto want = ref_matmul_i32(p.a, b, p.M, p.K, p.N);
  for (size_t m = 0; m < p.M; ++m)
    for (size_t n = 0; n < p.N; ++n) ASSERT_EQ(c_at<int32_t>(c, p.M, m, n), want[m * p.N + n]) << m << "," << n;
}

// Two M-tiles over one weight block: the second task's weights come from the cache, and
// both tiles are exact.
TEST(PreparedWeights, MTilesShareOneWeightBlockExactly) {
  const Int8Problem p;
  ProblemBos x(p, /*tracked=*/true);
  const auto before = x.dev.weights.stats();
  for (uint32_t m0 : {0u, 48u}) {
    const ChainResult r = run_one(x.dev, one_task(int8_task(x.A, x.B, x.C, p.M, m0, 48, p.K, p.N)));
    ASSERT_EQ(r.status, CoreStatus::ok) << r.message;
  }
  const auto after = x.dev.weights.stats();
  EXPECT_EQ(after.misses - before.misses, 1u);
  EXPECT_EQ(after.hits - before.hits, 1u);
  expect_product(x.C.bytes, p, p.b);
}

// New weights written into the same BO (a sync) are used by the next task, never the
// prepared old ones.
TEST(PreparedWeights, AWriteToTheWeightBoIsSeenByTheNextTask) {
  const Int8Problem p;
  ProblemBos x(p, /*tracked=*/true);
  const TaskSpec t = int8_task(x.A, x.B, x.C, p.M, 0, p.M, p.K, p.N);
  ASSERT_EQ(run_one(x.dev, one_task(t)).status, CoreStatus::ok);
  const auto b2 = random_i8(p.K * p.N, 99);
  ASSERT_TRUE(x.dev.mem.write(x.B.iova, pack_b_i8(b2, p.K, p.N).data(), x.B.bytes.size()));
  ASSERT_EQ(run_one(x.dev, one_task(t)).status, CoreStatus::ok);
  expect_product(x.C.bytes, p, b2);
}

// Task 2's output lands on task 1's weights (the DPU wrote the weight BO): task 1 run again
// computes with the bytes now there - the same bytes an untracked copy of the memory gives.
TEST(PreparedWeights, AnNpuWriteOverTheWeightsIsSeenByTheNextTask) {
  const Int8Problem p;
  const uint32_t M = p.M, K = p.K, N = p.N;
  auto run = [&](bool tracked) {
    ProblemBos x(p, tracked);  // B: 8 KiB of weights ...
    const TaskSpec t1 = int8_task(x.A, x.B, x.C, M, 0, M, K, N);
    EXPECT_EQ(run_one(x.dev, one_task(t1)).status, CoreStatus::ok);
    // ... overwritten by a 32 x 64 int32 output (8 KiB) computed from A's first rows.
    TaskSpec t2 = int8_task(x.A, x.B, x.C, M, 0, 32, K, N);
    t2.c = x.B.iova;
    t2.c_surf = 32;
    EXPECT_EQ(run_one(x.dev, one_task(t2)).status, CoreStatus::ok);
    EXPECT_EQ(run_one(x.dev, one_task(t1)).status, CoreStatus::ok);
    return x.C.bytes;
  };
  const auto untracked = run(false), tracked = run(true);
  EXPECT_EQ(tracked, untracked);
  // And the weights really changed: the result is not the first product.
  const auto first = ref_matmul_i32(p.a, p.b, M, K, N);
  EXPECT_NE(c_at<int32_t>(tracked, M, 0, 0), first[0]);
}

// Output surfaces closer than mc atoms overlap: the DPU writes surface by surface, rows in
// order, so a later surface's atom wins. The in-place path must not be taken there.
TEST(OutputCube, OverlappingSurfacesKeepTheDpuWriteOrder) {
  const uint32_t M = 8, K = 64, N = 32, surf = 4;  // 8 surfaces of 8 rows, 4 atoms apart
  const auto a = random_i8(M * K, 11), b = random_i8(K * N, 12);
  Device dev;
  Bo& A = dev.alloc(M * K);
  Bo& B = dev.alloc(K * N);
  Bo& C = dev.alloc(4096, 0x5a);
  std::memcpy(A.bytes.data(), pack_a_i8(a, M, K).data(), M * K);
  std::memcpy(B.bytes.data(), pack_b_i8(b, K, N).data(), K * N);
  TaskSpec t = int8_task(A, B, C, M, 0, M, K, N);
  t.c_surf = surf;
  const ChainResult r = run_one(dev, one_task(t));
  ASSERT_EQ(r.status, CoreStatus::ok) << r.message;
  const auto c = ref_matmul_i32(a, b, M, K, N);
  std::vector<uint8_t> want(4096, 0x5a);
  for (size_t s = 0; s < N / 4; ++s)
    for (size_t m = 0; m < M; ++m) std::memcpy(want.data() + (s * surf + m) * 16, &c[m * N + s * 4], 16);
  EXPECT_EQ(C.bytes, want);
}

// Output surfaces each in a BO of its own (the stride jumps the gaps between BOs): not one
// cube, so each surface is written on its own - all land, nothing in between is touched.
TEST(OutputCube, SurfacesInSeparateBosAreAllWritten) {
  const uint32_t M = 4, K = 32, N = 32;
  const auto a = random_i8(M * K, 21), b = random_i8(K * N, 22);
  Device dev;
  Bo& A = dev.alloc(M * K);
  Bo& B = dev.alloc(K * N);
  std::vector<Bo*> cs;
  for (uint8_t s = 0; s < N / 4; ++s) cs.push_back(&dev.alloc(4096, static_cast<uint8_t>(0x10 + s)));
  std::memcpy(A.bytes.data(), pack_a_i8(a, M, K).data(), M * K);
  std::memcpy(B.bytes.data(), pack_b_i8(b, K, N).data(), K * N);
  TaskSpec t = int8_task(A, B, *cs[0], M, 0, M, K, N);
  t.c_surf = static_cast<uint32_t>((cs[1]->iova - cs[0]->iova) / 16);  // the same for every pair
  const ChainResult r = run_one(dev, one_task(t));
  ASSERT_EQ(r.status, CoreStatus::ok) << r.message;
  const auto c = ref_matmul_i32(a, b, M, K, N);
  for (size_t s = 0; s < cs.size(); ++s) {
    std::vector<uint8_t> want(4096, static_cast<uint8_t>(0x10 + s));
    for (size_t m = 0; m < M; ++m) std::memcpy(want.data() + m * 16, &c[m * N + s * 4], 16);
    EXPECT_EQ(cs[s]->bytes, want) << "surface " << s;
  }
}

}  // namespace
}  // namespace ork::emu::testing
