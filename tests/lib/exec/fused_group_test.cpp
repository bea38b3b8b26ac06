// The facts a fused group (lib/exec/board_plan.h fusable) rests on, bit for bit: the members'
// native weights packed one after another are the fused K x (N1 + N2 + ...) weights exactly
// where fusable says so and the weights are one K-slice (and differ where it does not: a
// padded N-block; and with several K-slices, which fuse slice by slice: fused_slices_test.cpp);
// and one job of the fused weights (GroupJobs, the group of one fused member: the ordinary
// plan of the summed shape) gives each member's C in its columns, byte for byte the member
// run on its own, on emu and emu-rocket, at M = 1 and 128, int8 and fp16.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <random>

#include "driver/common/int4.h"
#include "lib/api/device.h"
#include "lib/exec/board_plan.h"
#include "lib/exec/group_job.h"
#include "lib/exec/model.h"
#include "lib/matmul/context.h"
#include "lib/matmul/run.h"

namespace ork::exec {
namespace {

using FusedShapes = std::vector<std::pair<int64_t, int64_t>>;

// Row-major K x N weights of `dtype` (int8 bytes, fp16 halves of small integers, int4 nibbles),
// seeded; `at(k, n)` the element's value for building the fused matrix.
struct RowMajor {
  matmul::DType dtype;
  int64_t k = 0, n = 0;
  std::vector<int> values;  // K x N, as small integers
  std::vector<uint8_t> bytes() const {
    const int64_t count = k * n;
    if (dtype == matmul::DType::int4) {
      std::vector<uint8_t> out(static_cast<size_t>(int4::packed_bytes(count)));
      for (int64_t i = 0; i < count; ++i) int4::put(out.data(), i, values[static_cast<size_t>(i)]);
      return out;
    }
    if (dtype == matmul::DType::fp16) {
      static const uint16_t kHalf[] = {0xc000, 0xbc00, 0x0000, 0x3c00, 0x4000};  // -2, -1, 0, 1, 2
      std::vector<uint8_t> out(static_cast<size_t>(count * 2));
      for (int64_t i = 0; i < count; ++i) {
        const uint16_t h = kHalf[values[static_cast<size_t>(i)] + 2];
        out[static_cast<size_t>(2 * i)] = static_cast<uint8_t>(h & 0xff);
        out[static_cast<size_t>(2 * i + 1)] = static_cast<uint8_t>(h >> 8);
      }
      return out;
    }
    std::vector<uint8_t> out(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i) out[static_cast<size_t>(i)] = static_cast<uint8_t>(values[static_cast<size_t>(i)]);
    return out;
  }
};

RowMajor seeded(matmul::DType dtype, int64_t k, int64_t n, uint32_t seed) {
  RowMajor w{dtype, k, n, std::vector<int>(static_cast<size_t>(k * n))};
  std::mt19937 rng(seed);
  const int lo = dtype == matmul::DType::int4 ? -8 : dtype == matmul::DType::fp16 ? -2 : -128;
  const int span = dtype == matmul::DType::int4 ? 16 : dtype == matmul::DType::fp16 ? 5 : 256;
  for (int& v : w.values) v = lo + static_cast<int>(rng() % static_cast<uint32_t>(span));
  return w;
}

// The members side by side: K x (N1 + N2 + ...), member j's column c at column offset_j + c.
RowMajor side_by_side(const std::vector<RowMajor>& members) {
  RowMajor f{members[0].dtype, members[0].k, 0, {}};
  for (const RowMajor& m : members) f.n += m.n;
  f.values.resize(static_cast<size_t>(f.k * f.n));
  int64_t offset = 0;
  for (const RowMajor& m : members) {
    for (int64_t r = 0; r < m.k; ++r)
      for (int64_t c = 0; c < m.n; ++c) f.values[static_cast<size_t>(r * f.n + offset + c)] = m.values[static_cast<size_t>(r * m.n + c)];
    offset += m.n;
  }
  return f;
}

std::vector<uint8_t> packed(const RowMajor& w, int64_t width) {
  auto layout = matmul::ResidentWeights::layout(w.dtype, w.k, w.n, width);
  EXPECT_TRUE(layout) << layout.error().message;
  std::vector<uint8_t> out(static_cast<size_t>(layout->b_bytes()));
  const std::vector<uint8_t> src = w.bytes();
  EXPECT_TRUE(matmul::pack_weights(*layout, src.data(), out));
  return out;
}

TEST(FusedWeights, TheMembersPackedSideBySideAreTheFusedWeightsExactlyWhereFusable) {
  using D = matmul::DType;
  struct Case {
    D dtype;
    FusedShapes shapes;
    int64_t width;  // int4's slice width (every member's), else 0
    bool fuses;
    bool concatenates;  // member after member is the fused packing
  };
  const Case cases[] = {
      {D::int8, {{256, 160}, {256, 32}, {256, 32}}, 0, true, true},
      {D::fp16, {{256, 48}, {256, 16}}, 0, true, true},
      {D::int4, {{1024, 128}, {1024, 64}}, 1024, true, true},
      {D::int8, {{4160, 64}, {4160, 32}}, 0, true, false},    // two K-slices (2080 + 2080): slice by slice
      {D::int8, {{256, 48}, {256, 32}}, 0, false, false},     // 48 columns pad an N-block of 32
      {D::int4, {{1024, 64}, {1024, 64}}, 512, true, false},  // two slices of 512: slice by slice
  };
  uint32_t seed = 1;
  for (const Case& c : cases) {
    const std::vector<int64_t> widths(c.shapes.size(), c.width);
    ASSERT_EQ(fusable(c.dtype, 1, c.shapes, widths), c.fuses) << dtype_key(c.dtype) << " K " << c.shapes[0].first;
    std::vector<RowMajor> members;
    std::vector<uint8_t> concatenated;
    for (const auto& [k, n] : c.shapes) {
      members.push_back(seeded(c.dtype, k, n, seed++));
      const std::vector<uint8_t> p = packed(members.back(), c.width);
      concatenated.insert(concatenated.end(), p.begin(), p.end());
    }
    EXPECT_EQ(concatenated == packed(side_by_side(members), c.width), c.concatenates)
        << dtype_key(c.dtype) << " K " << c.shapes[0].first << " width " << c.width;
  }
}

// The members' packed weights in one BO, one after another (what a fused tensor holds).
std::unique_ptr<driver::Bo> concatenated_bo(driver::Kmd& kmd, const std::vector<std::vector<uint8_t>>& parts) {
  size_t bytes = 0;
  for (const auto& p : parts) bytes += p.size();
  auto bo = kmd.bo_create(bytes, driver::BoUsage::data);
  EXPECT_TRUE(bo);
  size_t at = 0;
  for (const auto& p : parts) {
    std::copy(p.begin(), p.end(), (*bo)->map() + at);
    at += p.size();
  }
  EXPECT_TRUE(kmd.bo_sync(**bo, driver::SyncDir::to_device));
  return std::move(*bo);
}

// q/k/v-shaped members at `m` rows: run unfused (one chained job of three members) and fused
// (one job of one member on the concatenated weights); each member's C is its columns of
// the fused C, byte for byte; for int8 also the plain CPU product.
void fused_equals_members(driver::Kmd& kmd, matmul::DType dtype, int64_t m, const char* device) {
  const FusedShapes shapes = {{256, 320}, {256, 64}, {256, 64}};
  const int64_t k = 256, n_all = 448, out = 4;  // int32 / fp32 C, 4 bytes an element
  std::vector<RowMajor> w;
  std::vector<std::vector<uint8_t>> native;
  std::vector<std::unique_ptr<driver::Bo>> bos;
  for (size_t j = 0; j < shapes.size(); ++j) {
    w.push_back(seeded(dtype, k, shapes[j].second, static_cast<uint32_t>(10 + j)));
    native.push_back(packed(w.back(), 0));
    bos.push_back(concatenated_bo(kmd, {native.back()}));
  }
  const std::unique_ptr<driver::Bo> fused = concatenated_bo(kmd, native);
  RowMajor a = seeded(dtype, m, k, 99);
  const std::vector<uint8_t> a_bytes = a.bytes();
  std::vector<std::vector<uint8_t>> c(shapes.size());
  std::vector<GroupMember> members;
  for (size_t j = 0; j < shapes.size(); ++j) {
    c[j].assign(static_cast<size_t>(m * shapes[j].second * out), 0);
    members.push_back({bos[j].get(), k, shapes[j].second, a_bytes.data(), c[j].data()});
  }
  std::vector<uint8_t> cf(static_cast<size_t>(m * n_all * out), 0);
  const GroupMember one[] = {{fused.get(), k, n_all, a_bytes.data(), cf.data()}};
  GroupJobs jobs(kmd, dtype, m, 3);
  for (std::span<const GroupMember> g : {std::span<const GroupMember>(members), std::span<const GroupMember>(one)}) {
    auto job = jobs.launch(g);
    ASSERT_TRUE(job) << job.error().message;
    ASSERT_TRUE((*job)->complete());
  }
  int64_t col = 0;
  for (size_t j = 0; j < shapes.size(); ++j) {
    const int64_t n = shapes[j].second;
    for (int64_t r = 0; r < m; ++r)
      for (int64_t x = 0; x < n; ++x) {
        const size_t mine = static_cast<size_t>((r * n + x) * out), theirs = static_cast<size_t>((r * n_all + col + x) * out);
        ASSERT_TRUE(std::equal(&c[j][mine], &c[j][mine] + out, &cf[theirs]))
            << device << " " << dtype_key(dtype) << " m " << m << " matmul " << j << " row " << r << " col " << x;
        if (dtype != matmul::DType::int8) continue;
        int32_t want = 0, got = 0;
        for (int64_t kk = 0; kk < k; ++kk) want += a.values[static_cast<size_t>(r * k + kk)] * w[j].values[static_cast<size_t>(kk * n + x)];
        std::memcpy(&got, &cf[theirs], sizeof got);
        ASSERT_EQ(got, want) << device << " m " << m << " matmul " << j << " row " << r << " col " << x;
      }
    col += n;
  }
}

TEST(FusedGroup, OneJobOnTheFusedWeightsGivesEveryMembersBytes) {
  for (const char* name : {"emu", "emu-rocket"}) {
    auto dev = api::open_device(name);
    ASSERT_TRUE(dev) << dev.error().message;
    driver::Kmd& kmd = *(*dev)->backend->kmd();
    for (matmul::DType dt : {matmul::DType::int8, matmul::DType::fp16})
      for (int64_t m : {int64_t{1}, int64_t{128}}) fused_equals_members(kmd, dt, m, name);
  }
}

}  // namespace
}  // namespace ork::exec
