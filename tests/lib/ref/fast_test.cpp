// The fast int8 path (lib/ref/fast.h) == the oracle: matmul_int8_fast and the packed-B path
// (pack_b_int8, matmul_int8_packed) on every ISA tier this CPU has, odd and large shapes,
// extremes, grouped output layouts, named errors, concurrent callers and forked children.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <new>
#include <string>
#include <thread>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>
#if defined(__aarch64__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

#include "lib/ref/fast.h"
#include "driver/common/fp16.h"
#include "lib/ref/oracle.h"
#include "lib/ref/random.h"
#include "lib/ref/workers.h"

namespace ork::ref {
namespace {

// Under ThreadSanitizer (build-tsan, .ci/sanitizers) the two big shape sweeps below take
// fewer shapes: TSan is there for the threads, and these tests spent most of build-tsan's
// test_ref (and of its CI step) comparing single-threaded calls with the scalar oracle
// (docs/reliability.md "CI time", lever 25). Every shape still runs in every other build.
// Kept under TSan, so every threaded path of the fast int8 path is still crossed: calls on
// 2 threads whose panels split unevenly and are taken from the other thread's range
// (N = 300: 10 panels at 32 columns, 19 at 16, 38 at 8), one panel per thread (N = 33 at
// 32 columns), the rows kernel (M = 1, 8) and full tiles (M = 9, short_path off) on them,
// row- and column-major PackedB and the grouped output written from both threads, and
// pack_b_int8 packing a large B on the kept workers (K = 2048, N = 300).
#if defined(__SANITIZE_THREAD__)
constexpr bool kRefUnderTsan = true;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
constexpr bool kRefUnderTsan = true;
#else
constexpr bool kRefUnderTsan = false;
#endif
#else
constexpr bool kRefUnderTsan = false;
#endif

void expect_fast_equals_oracle(Dims d, uint32_t seed, std::vector<int8_t> a = {}, std::vector<int8_t> b = {}) {
  if (a.empty()) a = random_int8(d.m * d.k, seed);
  if (b.empty()) b = random_int8(d.k * d.n, seed + 1);
  std::vector<int32_t> want(d.m * d.n);
  ASSERT_TRUE(matmul_int8(a, b, want, d).ok());
  for (Isa isa : supported_isas()) {
    for (int threads : {1, 2}) {
      std::vector<int32_t> got(d.m * d.n, 0x5a5a5a5a);
      ASSERT_TRUE(matmul_int8_fast(a, b, got, d, {.threads = threads, .isa = isa}).ok());
      for (size_t i = 0; i < got.size(); ++i) {
        ASSERT_EQ(got[i], want[i]) << isa_name(isa) << " threads=" << threads << " M=" << d.m
                                   << " K=" << d.k << " N=" << d.n << " first bad cell (m="
                                   << i / d.n << ", n=" << i % d.n << ")";
      }
    }
  }
}

std::vector<int8_t> transposed(const std::vector<int8_t>& b, Dims d) {  // K x N -> N x K
  std::vector<int8_t> t(b.size());
  for (int64_t k = 0; k < d.k; ++k)
    for (int64_t n = 0; n < d.n; ++n) t[n * d.k + k] = b[k * d.n + n];
  return t;
}

// A PackedB from either order, reused for two different A, equals the oracle on every ISA.
void expect_packed_equals_oracle(Dims d, uint32_t seed, std::vector<int8_t> a = {}, std::vector<int8_t> b = {}) {
  if (a.empty()) a = random_int8(d.m * d.k, seed);
  if (b.empty()) b = random_int8(d.k * d.n, seed + 1);
  const auto a2 = random_int8(d.m * d.k, seed + 2);
  std::vector<int32_t> want(d.m * d.n), want2(d.m * d.n);
  ASSERT_TRUE(matmul_int8(a, b, want, d).ok());
  ASSERT_TRUE(matmul_int8(a2, b, want2, d).ok());
  const auto bt = transposed(b, d);
  for (Isa isa : supported_isas()) {
    for (BOrder order : {BOrder::row_major, BOrder::column_major}) {
      auto packed = pack_b_int8(order == BOrder::row_major ? b : bt, d.k, d.n, order, isa);
      ASSERT_TRUE(packed.ok()) << packed.error().message;
      for (int threads : {1, 2}) {
        for (int which : {0, 1}) {
          std::vector<int32_t> got(d.m * d.n, 0x5a5a5a5a);
          ASSERT_TRUE(matmul_int8_packed(which == 0 ? a : a2, d.m, *packed, got, {.threads = threads}).ok());
          ASSERT_EQ(got, which == 0 ? want : want2)
              << isa_name(isa) << (order == BOrder::row_major ? " row-major" : " column-major")
              << " threads=" << threads << " M=" << d.m << " K=" << d.k << " N=" << d.n;
        }
      }
    }
  }
}

TEST(PackedInt8, EqualsOracleOnOddShapes) {
  const int64_t sizes[] = {1, 2, 3, 5, 8, 9, 17, 33, 65};
  uint32_t seed = 500;
  for (int64_t m : sizes)
    for (int64_t k : sizes)
      for (int64_t n : {1, 7, 33, 65}) expect_packed_equals_oracle({m, k, n}, seed++);
}

TEST(PackedInt8, EqualsOracleOnLargerShapesAndExtremes) {
  // Under TSan 24 rows instead of 128: the threads split columns, never rows (kRefUnderTsan).
  expect_packed_equals_oracle({kRefUnderTsan ? 24 : 128, 2048, 300}, 1);
  expect_packed_equals_oracle({1, 4128, 130}, 2);
  const Dims d{9, 300, 40};  // VNNI's column correction at its largest
  expect_packed_equals_oracle(d, 0, std::vector<int8_t>(d.m * d.k, -128), std::vector<int8_t>(d.k * d.n, -128));
  if (kRefUnderTsan) return;  // three columns: one panel, one thread
  const Dims w{2, 140000, 3};  // the sum modulo 2^32
  expect_packed_equals_oracle(w, 0, std::vector<int8_t>(w.m * w.k, -128), std::vector<int8_t>(w.k * w.n, -128));
}

// The NPU's output-cube layout (groups of 4 columns, a surface stride with a gap): every
// cell where the layout puts it, and the gaps untouched.
TEST(PackedInt8, GroupedOutputLayout) {
  const Dims d{37, 300, 70};
  const auto a = random_int8(d.m * d.k, 61), b = random_int8(d.k * d.n, 62);
  std::vector<int32_t> want(d.m * d.n);
  ASSERT_TRUE(matmul_int8(a, b, want, d).ok());
  const int64_t group = 4, row_stride = 4, surface = (d.m + 3) * 4;  // 3 rows of gap per surface
  const int64_t surfaces = (d.n + group - 1) / group;
  for (Isa isa : supported_isas()) {
    auto packed = pack_b_int8(b, d.k, d.n, BOrder::row_major, isa);
    ASSERT_TRUE(packed.ok());
    std::vector<int32_t> cube(surfaces * surface, 0x5a5a5a5a);
    const CLayout layout{cube.data(), row_stride, group, surface};
    ASSERT_TRUE(matmul_int8_packed(a, d.m, *packed, layout, {.threads = 2}).ok());
    std::vector<int32_t> expect(cube.size(), 0x5a5a5a5a);
    for (int64_t m = 0; m < d.m; ++m)
      for (int64_t n = 0; n < d.n; ++n) expect[(n / group) * surface + m * row_stride + n % group] = want[m * d.n + n];
    ASSERT_EQ(cube, expect) << isa_name(isa);
  }
}

// Short M (1..9: the rows kernel up to 8, full tiles from 9) on every tier, thread count and
// short_path setting (false: full tiles with padding rows), through matmul_int8_fast and a
// PackedB of either B order, row-major C and the grouped layout.
void expect_short_m_equals_oracle(Dims d, uint32_t seed) {
  const auto a = random_int8(d.m * d.k, seed), b = random_int8(d.k * d.n, seed + 1), bt = transposed(b, d);
  std::vector<int32_t> want(d.m * d.n);
  ASSERT_TRUE(matmul_int8(a, b, want, d).ok());
  const int64_t group = 4, surface = (d.m + 1) * group, surfaces = (d.n + group - 1) / group;
  std::vector<int32_t> cube_want(surfaces * surface, 0x5a5a5a5a);
  for (int64_t m = 0; m < d.m; ++m)
    for (int64_t n = 0; n < d.n; ++n) cube_want[(n / group) * surface + m * group + n % group] = want[m * d.n + n];
  for (Isa isa : supported_isas()) {
    auto row_packed = pack_b_int8(b, d.k, d.n, BOrder::row_major, isa);
    auto col_packed = pack_b_int8(bt, d.k, d.n, BOrder::column_major, isa);
    ASSERT_TRUE(row_packed.ok() && col_packed.ok());
    for (int threads : {1, 2}) {
      for (bool short_path : {true, false}) {
        const FastOptions o{.threads = threads, .isa = isa, .short_path = short_path};
        const std::string where = std::string(isa_name(isa)) + " threads=" + std::to_string(threads) +
                                  " short_path=" + std::to_string(short_path) + " M=" + std::to_string(d.m) +
                                  " K=" + std::to_string(d.k) + " N=" + std::to_string(d.n);
        std::vector<int32_t> got(d.m * d.n, 0x5a5a5a5a);
        ASSERT_TRUE(matmul_int8_fast(a, b, got, d, o).ok());
        ASSERT_EQ(got, want) << "fast " << where;
        for (const PackedB* packed : {&*row_packed, &*col_packed}) {
          std::fill(got.begin(), got.end(), 0x5a5a5a5a);
          ASSERT_TRUE(matmul_int8_packed(a, d.m, *packed, got, o).ok());
          ASSERT_EQ(got, want) << (packed == &*row_packed ? "row-major" : "column-major") << " PackedB " << where;
        }
        std::vector<int32_t> cube(cube_want.size(), 0x5a5a5a5a);
        ASSERT_TRUE(matmul_int8_packed(a, d.m, *col_packed, CLayout{cube.data(), group, group, surface}, o).ok());
        ASSERT_EQ(cube, cube_want) << "grouped output " << where;
      }
    }
  }
}

TEST(PackedInt8, ShortMEqualsOracle) {
  uint32_t seed = 900;
  for (int64_t m = 1; m <= 9; ++m) {
    // K: one group, a partial group, groups not a multiple of the K split (8, 4, 2) or of
    // AMX's 16; N: a partial panel, one panel and a bit, several panels and grabs.
    for (int64_t k : {1, 3, 5, 20, 63, 65, 300, 2051})
      for (int64_t n : {1, 7, 33, 65, 300}) {
        // Under TSan the shapes on two threads (kRefUnderTsan): 12 of the 360.
        const bool threaded = (m == 1 || m == 8 || m == 9) && (k == 20 || k == 300) && (n == 33 || n == 300);
        if (!kRefUnderTsan || threaded) expect_short_m_equals_oracle({m, k, n}, seed);
        ++seed;
      }
  }
  // Extremes: all -128 (biased A is 0, the column correction largest) and K = 140000
  // (the sums wrap modulo 2^32) through the rows kernel.
  for (const Dims d : {Dims{3, 300, 40}, Dims{1, 140000, 3}}) {
    const std::vector<int8_t> a(d.m * d.k, -128), b(d.k * d.n, -128);
    std::vector<int32_t> want(d.m * d.n);
    ASSERT_TRUE(matmul_int8(a, b, want, d).ok());
    for (Isa isa : supported_isas()) {
      auto packed = pack_b_int8(b, d.k, d.n, BOrder::row_major, isa);
      ASSERT_TRUE(packed.ok());
      std::vector<int32_t> got(d.m * d.n), got_fast(d.m * d.n);
      ASSERT_TRUE(matmul_int8_packed(a, d.m, *packed, got).ok());
      ASSERT_TRUE(matmul_int8_fast(a, b, got_fast, d, {.isa = isa}).ok());
      EXPECT_EQ(got, want) << isa_name(isa) << " K=" << d.k;
      EXPECT_EQ(got_fast, want) << isa_name(isa) << " K=" << d.k;
    }
  }
}

TEST(PackedInt8, ErrorsAreNamed) {
  const std::vector<int8_t> b(6, 1), a(4, 1);
  std::vector<int32_t> c(6);  // A 2 x 2, B 2 x 3
  EXPECT_EQ(pack_b_int8(b, 2, 4, BOrder::row_major).error().message, "pack_b_int8: B has 6 elements, K x N = 8");
  EXPECT_EQ(pack_b_int8(b, 0, 6, BOrder::row_major).error().message, "pack_b_int8: K and N must be >= 1");
  EXPECT_EQ(matmul_int8_packed(a, 2, PackedB{}, c).error().message,
            "matmul_int8_packed: B was never packed (pack_b_int8)");
  auto good = pack_b_int8(b, 2, 3, BOrder::row_major);
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(matmul_int8_packed(a, 2, *good, CLayout{c.data(), 3, 0, 0}).error().message,
            "matmul_int8_packed: C layout without base or group");
  auto packed = pack_b_int8(b, 2, 3, BOrder::row_major, Isa::generic);
  ASSERT_TRUE(packed.ok());
  EXPECT_FALSE(matmul_int8_packed(a, 3, *packed, c).ok());  // A is 2 x 2, not 3 x 2
  std::vector<int32_t> c5(5), c6(6);
  EXPECT_FALSE(matmul_int8_packed(a, 2, *packed, c5).ok());  // C must be 2 x 3
  EXPECT_TRUE(matmul_int8_packed(a, 2, *packed, c6).ok());
  EXPECT_EQ(c6, std::vector<int32_t>(6, 2));
  if (isa_supported(Isa::sse2)) {
    EXPECT_EQ(matmul_int8_packed(a, 2, *packed, c6, {.isa = Isa::sse2}).error().message,
              "matmul_int8_packed: B was packed for isa generic, not sse2");
  }
}

// Every test here runs each tier this CPU has (supported_isas()), so which tiers those are
// decides what is tested: on AArch64 the SDOT tier is there exactly when the kernel's hwcaps
// say the CPU has dot product, and it is then the default; generic is always there and can
// be forced. ORK_TEST_REQUIRE_ISA=<name> (.ci/arm64 sets sdot; qemu-aarch64 emulates it)
// fails the run when that tier is missing, so CI cannot lose a tier without noticing.
TEST(FastInt8, TiersFollowTheCpu) {
  const auto isas = supported_isas();
  ASSERT_FALSE(isas.empty());
  EXPECT_EQ(isas.front(), Isa::generic);
  EXPECT_EQ(best_isa(), isas.back());
  std::string names;
  for (Isa isa : isas) names += std::string(names.empty() ? "" : ", ") + isa_name(isa);
  std::printf("fast int8 tiers tested on this CPU: %s\n", names.c_str());
#if defined(__aarch64__)
  const bool dotprod = (getauxval(AT_HWCAP) & HWCAP_ASIMDDP) != 0;
  EXPECT_EQ(isa_supported(Isa::sdot), dotprod);
  if (dotprod) {
    EXPECT_EQ(best_isa(), Isa::sdot);
  } else {
    std::printf("no dot product (HWCAP_ASIMDDP) on this CPU: the sdot tier is not tested here\n");
  }
#else
  EXPECT_FALSE(isa_supported(Isa::sdot));
#endif
  if (const char* want = std::getenv("ORK_TEST_REQUIRE_ISA"); want != nullptr && *want != 0) {
    bool found = false;
    for (Isa isa : isas) found |= std::string(isa_name(isa)) == want;
    EXPECT_TRUE(found) << "ORK_TEST_REQUIRE_ISA=" << want << " but this CPU has " << names;
  }
  for (Isa isa : {Isa::sse2, Isa::avx2, Isa::avx512_vnni, Isa::amx, Isa::sdot}) {
    if (isa_supported(isa)) continue;  // a tier this CPU lacks is refused by name
    std::vector<int8_t> a(4, 1), b(4, 1);
    std::vector<int32_t> c(4);
    EXPECT_EQ(matmul_int8_fast(a, b, c, {2, 2, 2}, {.isa = isa}).error().message,
              std::string("isa ") + isa_name(isa) + ": not supported by this CPU");
  }
}

TEST(FastInt8, EqualsOracleOnOddShapes) {
  const int64_t sizes[] = {1, 2, 3, 5, 7, 8, 9, 15, 16, 17, 31, 33, 63, 65};
  uint32_t seed = 10;
  for (int64_t m : sizes) {
    for (int64_t k : sizes) {
      for (int64_t n : {1, 7, 16, 33, 65}) expect_fast_equals_oracle({m, k, n}, seed++);
    }
  }
}

TEST(FastInt8, EqualsOracleOnLargerShapes) {
  expect_fast_equals_oracle({1, 2048, 2048}, 1);
  // Under TSan fewer rows (a short last tile kept): the threads split columns (kRefUnderTsan).
  expect_fast_equals_oracle({kRefUnderTsan ? 17 : 129, 1000, 97}, 2);
  expect_fast_equals_oracle({kRefUnderTsan ? 16 : 64, 4128, 130}, 3);
}

TEST(FastInt8, ExtremesAndWrapAround) {
  // All -128: the VNNI path's biased A is 0 and its column correction is largest.
  const Dims d{9, 300, 40};
  expect_fast_equals_oracle(d, 0, std::vector<int8_t>(d.m * d.k, -128), std::vector<int8_t>(d.k * d.n, -128));
  expect_fast_equals_oracle(d, 0, std::vector<int8_t>(d.m * d.k, -128), std::vector<int8_t>(d.k * d.n, 127));
  // K = 140000: 16384 * K > 2^31, the exact sum modulo 2^32 on every path.
  const Dims w{2, 140000, 3};
  expect_fast_equals_oracle(w, 0, std::vector<int8_t>(w.m * w.k, -128), std::vector<int8_t>(w.k * w.n, -128));
  std::vector<int32_t> c(6);
  ASSERT_TRUE(matmul_int8(std::vector<int8_t>(w.m * w.k, -128), std::vector<int8_t>(w.k * w.n, -128), c, w).ok());
  EXPECT_EQ(c[0], static_cast<int32_t>(static_cast<uint32_t>(16384u * 140000u)));
}

// Two callers at once share the fast path's scratch pool: each must still get its own exact
// result (the pool hands a buffer to one lease at a time).
TEST(FastInt8, ConcurrentCallersGetExactResults) {
  const Dims d{70, 300, 90};
  const auto a = random_int8(d.m * d.k, 41), b = random_int8(d.k * d.n, 42);
  const auto a2 = random_int8(d.m * d.k, 43);
  std::vector<int32_t> want(d.m * d.n), want2(d.m * d.n);
  ASSERT_TRUE(matmul_int8(a, b, want, d).ok());
  ASSERT_TRUE(matmul_int8(a2, b, want2, d).ok());
  std::vector<int32_t> got(d.m * d.n), got2(d.m * d.n);
  bool ok1 = true, ok2 = true;
  {
    std::jthread t1([&] {
      for (int i = 0; i < 20 && ok1; ++i) ok1 = matmul_int8_fast(a, b, got, d, {.threads = 2}).ok() && got == want;
    });
    std::jthread t2([&] {
      for (int i = 0; i < 20 && ok2; ++i) ok2 = matmul_int8_fast(a2, b, got2, d, {.threads = 2}).ok() && got2 == want2;
    });
  }
  EXPECT_TRUE(ok1);
  EXPECT_TRUE(ok2);
}

// A process that forks after a threaded call: the child has no kept workers, and its own
// threaded calls must neither wait for them nor compute anything else.
TEST(FastInt8, ThreadedCallsWorkInAForkedChild) {
  const Dims d{64, 512, 256};
  const auto a = random_int8(d.m * d.k, 71), b = random_int8(d.k * d.n, 72);
  std::vector<int32_t> want(d.m * d.n), got(d.m * d.n);
  ASSERT_TRUE(matmul_int8(a, b, want, d).ok());
  ASSERT_TRUE(matmul_int8_fast(a, b, got, d, {.threads = 2}).ok());  // the workers exist now
  ASSERT_EQ(got, want);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::vector<int32_t> c(d.m * d.n);
    const bool ok = matmul_int8_fast(a, b, c, d, {.threads = 2}).ok() && c == want;
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace ork::ref

// A worker that throws (std::bad_alloc under memory pressure) is the caller's exception, not
// std::terminate; the caller's own waits for the workers; the kept workers work afterwards.
TEST(Workers, AnExceptionOnAnyThreadReachesTheCallerAndTheWorkersStayUsable) {
  for (int thrower : {0, 1, 2}) {
    std::atomic<int> ran{0};
    EXPECT_THROW(ork::ref::detail::run_on_threads(3, std::function<void(int)>([&](int i) {
                   ++ran;
                   if (i == thrower) throw std::bad_alloc();
                 })),
                 std::bad_alloc)
        << "thrower " << thrower;
    EXPECT_EQ(ran.load(), 3) << "every thread ran before the rethrow";
  }
  std::atomic<int> sum{0};
  ork::ref::detail::run_on_threads(3, std::function<void(int)>([&](int i) { sum += i + 1; }));
  EXPECT_EQ(sum.load(), 6);
}

// A step's CPU time (workers.h CpuAccounting): the caller's own thread clock plus what the
// helper threads spent in its run_on_threads calls, whatever the machine's load (each thread
// burns a set amount of its own CPU time, so the figure does not depend on how long it
// waited for a core); nothing measured without the accounting on.
namespace {
int64_t own_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}
void burn_cpu(int64_t ns) {  // until this thread has used `ns` more of CPU time
  const int64_t until = own_cpu_ns() + ns;
  volatile uint64_t x = 0;
  while (own_cpu_ns() < until)
    for (int i = 0; i < 1000; ++i) x = x + static_cast<uint64_t>(i);
}
}  // namespace

TEST(Workers, CpuAccountingSumsEveryThreadOfAStep) {
  namespace d = ork::ref::detail;
  EXPECT_EQ(d::work_cpu_ns(), 0);  // off: nothing read
  const d::CpuAccounting on;
  const int64_t t0 = d::work_cpu_ns();
  d::run_on_threads(2, std::function<void(int)>([](int) { burn_cpu(20'000'000); }));  // 20 ms each
  const int64_t both = d::work_cpu_ns() - t0;
  EXPECT_GE(both, 40'000'000);  // the caller's 20 ms and the helper's 20 ms
  EXPECT_LT(both, 400'000'000);  // and not the others' work (a loose bound: 10x)
  {
    const d::CpuAccounting nested;  // nesting keeps it on
    EXPECT_GT(d::work_cpu_ns(), 0);
  }
  EXPECT_GT(d::work_cpu_ns(), 0);
}
