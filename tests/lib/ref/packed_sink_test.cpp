// The packed int8 path's sink entry (lib/ref/fast.h, matmul_int8_packed_to) == the oracle:
// each chunk's int32 sums handed to the caller on the thread that computed them (the cpu
// device's per-channel dequantisation runs there, docs/quantisation.md).
#include <gtest/gtest.h>

#include <cstdint>
#include <mutex>
#include <vector>

#include "lib/ref/fast.h"
#include "lib/ref/oracle.h"
#include "lib/ref/random.h"

namespace ork::ref {
namespace {

// matmul_int8_packed_to: each column handed to the sink once, equal to the oracle, on every
// tier and 1 and 2 threads; short M (rows kernel) and full tiles; N off the chunk width (4
// panels); every value at -128; and the refusals.
void expect_sink_equals_oracle(Dims d, const std::vector<int8_t>& a, const std::vector<int8_t>& b) {
  std::vector<int32_t> want(d.m * d.n);
  ASSERT_TRUE(matmul_int8(a, b, want, d).ok());
  for (Isa isa : supported_isas()) {
    auto packed = pack_b_int8(b, d.k, d.n, BOrder::row_major, isa);
    ASSERT_TRUE(packed.ok()) << packed.error().message;
    for (int threads : {1, 2}) {
      std::vector<int32_t> got(d.m * d.n, 0x5a5a5a5a);
      std::vector<int> seen(d.n, 0);
      std::mutex mu;  // two threads' sinks: disjoint columns, but one `seen`
      const ColumnSink sink = [&](int64_t n0, int64_t n1, const int32_t* sums, int64_t ld) {
        std::lock_guard<std::mutex> lock(mu);
        for (int64_t n = n0; n < n1; ++n) {
          ++seen[n];
          for (int64_t m = 0; m < d.m; ++m) got[m * d.n + n] = sums[m * ld + n - n0];
        }
      };
      ASSERT_TRUE(matmul_int8_packed_to(a, d.m, *packed, sink, {.threads = threads}).ok());
      ASSERT_EQ(seen, std::vector<int>(d.n, 1)) << isa_name(isa) << " threads=" << threads;
      ASSERT_EQ(got, want) << isa_name(isa) << " threads=" << threads << " M=" << d.m << " K=" << d.k << " N=" << d.n;
    }
  }
}

TEST(PackedInt8, SinkGetsEveryColumnOnceAsTheOracle) {
  uint32_t seed = 700;
  for (Dims d : {Dims{1, 45, 33}, Dims{5, 300, 130}, Dims{9, 64, 257}, Dims{70, 131, 200}, Dims{8, 2048, 300}}) {
    expect_sink_equals_oracle(d, random_int8(d.m * d.k, seed), random_int8(d.k * d.n, seed + 1));
    seed += 2;
  }
  const Dims x{11, 1000, 70};
  expect_sink_equals_oracle(x, std::vector<int8_t>(x.m * x.k, -128), std::vector<int8_t>(x.k * x.n, -128));
}

TEST(PackedInt8, SinkErrorsAreNamed) {
  const std::vector<int8_t> b(6, 1), a(4, 1);
  auto packed = pack_b_int8(b, 2, 3, BOrder::row_major);
  ASSERT_TRUE(packed.ok());
  const ColumnSink sink = [](int64_t, int64_t, const int32_t*, int64_t) {};
  EXPECT_EQ(matmul_int8_packed_to(a, 2, *packed, nullptr).error().message, "matmul_int8_packed_to: no sink");
  EXPECT_EQ(matmul_int8_packed_to(a, 2, PackedB{}, sink).error().message,
            "matmul_int8_packed: B was never packed (pack_b_int8)");
  EXPECT_FALSE(matmul_int8_packed_to(a, 3, *packed, sink).ok());  // A is 2 x 2, not 3 x 2
}

}  // namespace
}  // namespace ork::ref
