// ork_matmul_t on tensors: host memory and device buffers, at offsets and row strides, every
// dtype (int8, fp16 with fp32 and fp16 C, W4A4, w4a8) on cpu, emu-rknpu and emu-rocket.
// Every cell of C's window is compared with the reference oracle (lib/ref), every byte
// outside it must be untouched, and A's buffer must be unchanged. Then ork_matmul's dense
// host operands: refused by name when not aligned to their element, on every backend.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "lib/api/buffer.h"
#include "lib/matmul/plan.h"
#include "lib/ref/fast.h"
#include "driver/common/fp16.h"
#include "lib/ref/oracle.h"
#include "ork/ork.h"
#include "driver/common/int4.h"

namespace {

enum class TensorMode { int8, fp16, fp16_out, w4a4, w4a8 };
const char* tensor_mode_name(TensorMode m) {
  switch (m) {
    case TensorMode::int8: return "int8";
    case TensorMode::fp16: return "fp16";
    case TensorMode::fp16_out: return "fp16out";
    case TensorMode::w4a4: return "w4a4";
    case TensorMode::w4a8: return "w4a8";
  }
  return "?";
}
int a_bits(TensorMode m) { return m == TensorMode::w4a4 ? 4 : (m == TensorMode::fp16 || m == TensorMode::fp16_out) ? 16 : 8; }
int c_bits(TensorMode m) { return m == TensorMode::fp16_out ? 16 : 32; }

// Where an operand lies: in host memory or a buffer, `row0` rows and `col0` columns into a
// matrix `extra` columns wider than the operand (stride 0 when extra is 0 and `dense`).
struct Placement {
  bool buffer = false;
  int64_t row0 = 0, col0 = 0, extra = 0;
};

struct TensorCase {
  TensorMode mode;
  int64_t m, k, n;
  Placement a, c;
  std::string name() const {
    auto p = [](const Placement& x) {
      return std::string(x.buffer ? "buf" : "host") + "_r" + std::to_string(x.row0) + "c" + std::to_string(x.col0) + "x" +
             std::to_string(x.extra);
    };
    return std::string(tensor_mode_name(mode)) + "_M" + std::to_string(m) + "_K" + std::to_string(k) + "_N" +
           std::to_string(n) + "_A" + p(a) + "_C" + p(c);
  }
};

std::vector<TensorCase> tensor_cases() {
  std::vector<TensorCase> out;
  const Placement dense{}, host_strided{false, 0, 2, 6}, buf_dense{true, 0, 0, 0}, buf_offset{true, 3, 0, 0},
      buf_strided{true, 1, 4, 10}, buf_cols{true, 2, 48, 96};  // C as columns of a wider (q|k|v) matrix
  for (TensorMode mode : {TensorMode::int8, TensorMode::fp16, TensorMode::fp16_out, TensorMode::w4a4, TensorMode::w4a8}) {
    for (auto [m, k, n] : {std::tuple<int64_t, int64_t, int64_t>{1, 64, 48}, {5, 96, 40}, {17, 130, 80}}) {
      for (const auto& [pa, pc] : std::vector<std::pair<Placement, Placement>>{
               {dense, dense}, {host_strided, host_strided}, {buf_dense, buf_dense}, {buf_offset, buf_strided},
               {buf_strided, buf_cols}, {host_strided, buf_cols}, {buf_cols, dense}})
        out.push_back({mode, m, k, n, pa, pc});
      // int4 A with an odd row stride: rows start mid-byte.
      if (mode == TensorMode::w4a4) out.push_back({mode, m, k, n, {true, 2, 2, 3}, buf_strided});
    }
  }
  return out;
}

int64_t tensor_fp16_slice_k(int64_t k, int64_t n) {
  auto p = ork::matmul::make_plan({1, k, n}, {.dtype = ork::matmul::DType::fp16, .cores = 1});
  EXPECT_TRUE(p.ok());
  return p->slice_k;
}

// Element (r, col) of a matrix of `bits`-wide elements, `width` elements per row, copied
// between two byte arrays.
void copy_elem(const uint8_t* src, int64_t si, uint8_t* dst, int64_t di, int bits) {
  if (bits == 4) {
    ork::int4::put(dst, di, ork::int4::code_at(src, si));
  } else {
    std::memcpy(dst + di * (bits / 8), src + si * (bits / 8), static_cast<size_t>(bits / 8));
  }
}

size_t bytes_for(int64_t elems, int bits) { return static_cast<size_t>((elems * bits + 7) / 8); }

// The dense operand and the C the oracle gives for it.
std::vector<uint8_t> tensor_reference(const TensorCase& c, const std::vector<uint8_t>& a, const std::vector<uint8_t>& w) {
  const ork::ref::Dims d{c.m, c.k, c.n};
  const size_t mn = static_cast<size_t>(c.m * c.n), mk = static_cast<size_t>(c.m * c.k), kn = static_cast<size_t>(c.k * c.n);
  std::vector<uint8_t> out(bytes_for(c.m * c.n, c_bits(c.mode)));
  if (c.mode == TensorMode::fp16 || c.mode == TensorMode::fp16_out) {
    std::span<const uint16_t> av{reinterpret_cast<const uint16_t*>(a.data()), mk};
    std::span<const uint16_t> wv{reinterpret_cast<const uint16_t*>(w.data()), kn};
    auto s = c.mode == TensorMode::fp16_out
                 ? ork::ref::matmul_fp16_sliced_to_fp16(av, wv, {reinterpret_cast<uint16_t*>(out.data()), mn}, d,
                                                        tensor_fp16_slice_k(c.k, c.n))
                 : ork::ref::matmul_fp16_sliced(av, wv, {reinterpret_cast<float*>(out.data()), mn}, d,
                                                tensor_fp16_slice_k(c.k, c.n));
    EXPECT_TRUE(s.ok());
    return out;
  }
  std::vector<int8_t> a8(mk), w8(kn);
  for (size_t i = 0; i < kn; ++i)
    w8[i] = c.mode == TensorMode::int8 ? static_cast<int8_t>(w[i]) : ork::int4::value_at(w.data(), static_cast<int64_t>(i));
  for (size_t i = 0; i < mk; ++i)
    a8[i] = c.mode == TensorMode::w4a4 ? ork::int4::value_at(a.data(), static_cast<int64_t>(i)) : static_cast<int8_t>(a[i]);
  std::span<int32_t> cv{reinterpret_cast<int32_t*>(out.data()), mn};
  auto s = c.mode == TensorMode::w4a4 ? ork::ref::matmul_int4(a8, w8, cv, d) : ork::ref::matmul_int8(a8, w8, cv, d);
  EXPECT_TRUE(s.ok());
  return out;
}

std::vector<uint8_t> random_operand(size_t bytes, int bits, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint8_t> v(bytes);
  for (size_t i = 0; i < v.size(); ++i) {
    if (bits == 16 && i % 2 == 0) {  // finite halves in [-4, 4)
      const uint16_t h = ork::float_to_half(std::uniform_real_distribution<float>(-4.0f, 4.0f)(rng));
      std::memcpy(&v[i], &h, 2);
      ++i;
    } else {
      v[i] = static_cast<uint8_t>(rng());
    }
  }
  return v;
}

// The whole matrix an operand lies in: rows [0, row0 + rows), width cols + extra; its tensor.
struct Backing {
  std::vector<uint8_t> host;
  ork_buffer* buffer = nullptr;
  uint8_t* bytes = nullptr;
  size_t size = 0;
  int64_t width = 0;
  ork_tensor tensor{};
};

void place(ork_device* dev, const Placement& p, int64_t rows, int64_t cols, int bits, Backing* b) {
  b->width = cols + p.extra;
  b->size = bytes_for((p.row0 + rows) * b->width, bits);
  if (p.buffer) {
    ASSERT_EQ(ork_buffer_create(dev, b->size, &b->buffer), ORK_OK) << ork_last_error();
    ASSERT_EQ(ork_buffer_size(b->buffer), b->size);
    void* ptr = nullptr;
    ASSERT_EQ(ork_buffer_map(b->buffer, &ptr), ORK_OK);
    b->bytes = static_cast<uint8_t*>(ptr);
  } else {
    b->host.resize(b->size);
    b->bytes = b->host.data();
  }
  b->tensor.host = p.buffer ? nullptr : b->bytes;
  b->tensor.buffer = b->buffer;
  b->tensor.offset_bytes = bytes_for(p.row0 * b->width + p.col0, bits);
  b->tensor.row_stride = p.extra == 0 ? 0 : b->width;
  ASSERT_TRUE(bits != 4 || (p.row0 * b->width + p.col0) % 2 == 0) << "int4 operand must start on a byte";
}

class TensorSweep : public ::testing::TestWithParam<TensorCase> {};

TEST_P(TensorSweep, BitExactOnEveryBackend) {
  const TensorCase c = GetParam();
  const int ab = a_bits(c.mode), cb = c_bits(c.mode);
  const bool fp16 = c.mode == TensorMode::fp16 || c.mode == TensorMode::fp16_out;
  const ork_dtype w_dtype = fp16 ? ORK_DTYPE_FP16 : c.mode == TensorMode::int8 ? ORK_DTYPE_INT8 : ORK_DTYPE_INT4;
  const std::vector<uint8_t> w =
      random_operand(bytes_for(c.k * c.n, fp16 ? 16 : c.mode == TensorMode::int8 ? 8 : 4), fp16 ? 16 : 8, 7 + c.k);
  ork_matmul_options opt{};
  opt.struct_size = sizeof(opt);
  if (c.mode == TensorMode::w4a8) opt.a_dtype = ORK_DTYPE_INT8;
  if (c.mode == TensorMode::fp16_out) opt.c_dtype = ORK_DTYPE_FP16;
  for (const char* backend : {"cpu", "emu-rknpu", "emu-rocket"}) {
    SCOPED_TRACE(backend);
    ork_device* dev = nullptr;
    ASSERT_EQ(ork_device_open(backend, &dev), ORK_OK) << ork_last_error();
    ork_weights* wt = nullptr;
    ASSERT_EQ(ork_weights_create(dev, w_dtype, c.k, c.n, w.data(), &wt), ORK_OK) << ork_last_error();
    Backing a, cc;
    place(dev, c.a, c.m, c.k, ab, &a);
    place(dev, c.c, c.m, c.n, cb, &cc);
    const auto a_all = random_operand(a.size, ab, 11 + c.m);
    std::memcpy(a.bytes, a_all.data(), a.size);
    std::memset(cc.bytes, 0x5a, cc.size);
    std::vector<uint8_t> dense_a(bytes_for(c.m * c.k, ab));
    for (int64_t r = 0; r < c.m; ++r)
      for (int64_t k = 0; k < c.k; ++k)
        copy_elem(a.bytes, (c.a.row0 + r) * a.width + c.a.col0 + k, dense_a.data(), r * c.k + k, ab);
    const auto want = tensor_reference(c, dense_a, w);

    ASSERT_EQ(ork_matmul_t(dev, wt, &a.tensor, c.m, &cc.tensor, &opt), ORK_OK) << ork_last_error();
    EXPECT_EQ(std::memcmp(a.bytes, a_all.data(), a.size), 0) << "A changed";
    std::vector<uint8_t> expect(cc.size, 0x5a);
    for (int64_t r = 0; r < c.m; ++r)
      for (int64_t n = 0; n < c.n; ++n)
        copy_elem(want.data(), r * c.n + n, expect.data(), (c.c.row0 + r) * cc.width + c.c.col0 + n, cb);
    for (size_t i = 0; i < cc.size; ++i) {
      if (cc.bytes[i] == expect[i]) continue;
      const int64_t e = static_cast<int64_t>(i) / (cb / 8);
      FAIL() << "first bad byte " << i << ": row " << e / cc.width << " col " << e % cc.width << ": got "
             << int(cc.bytes[i]) << ", want " << int(expect[i]);
    }
    EXPECT_EQ(ork_buffer_destroy(a.buffer), ORK_OK);
    EXPECT_EQ(ork_buffer_destroy(cc.buffer), ORK_OK);
    ork_weights_destroy(wt);
    ork_device_close(dev);
  }
}

// A buffer held by a call or a job (BufferUse, what async jobs keep until they are waited
// for) cannot be destroyed: the refusal names the users, and the buffer stays valid.
TEST(Buffer, DestroyWhileInUseIsRefused) {
  for (const char* backend : {"cpu", "emu-rknpu", "emu-rocket"}) {
    SCOPED_TRACE(backend);
    ork_device* dev = nullptr;
    ASSERT_EQ(ork_device_open(backend, &dev), ORK_OK) << ork_last_error();
    ork_buffer* buf = nullptr;
    ASSERT_EQ(ork_buffer_create(dev, 256, &buf), ORK_OK) << ork_last_error();
    {
      ork::api::BufferUse use(buf);
      EXPECT_EQ(ork_buffer_destroy(buf), ORK_E_INVALID_ARGUMENT);
      EXPECT_NE(std::string(ork_last_error()).find("in use"), std::string::npos) << ork_last_error();
      void* p = nullptr;
      ASSERT_EQ(ork_buffer_map(buf, &p), ORK_OK);
      static_cast<uint8_t*>(p)[255] = 1;  // still mapped and writable
    }
    EXPECT_EQ(ork_buffer_destroy(buf), ORK_OK) << ork_last_error();
    ork_device_close(dev);
  }
}

INSTANTIATE_TEST_SUITE_P(Placements, TensorSweep, ::testing::ValuesIn(tensor_cases()),
                         [](const auto& info) { return info.param.name(); });

}  // namespace

namespace {

// ork_matmul hands its host A and C to the backend as they are, with the checks of two dense
// host tensors: an element pointer not aligned to its element is refused, naming the operand,
// on every backend (lib/api/matmul_t.cpp matmul_dense; tensor.cpp check_host_aligned).
TEST(DenseCall, MisalignedHostOperandsAreRefusedByName) {
  for (const char* name : {"cpu", "emu-rknpu", "emu-rocket"}) {
    SCOPED_TRACE(name);
    ork_device* dev = nullptr;
    ASSERT_EQ(ork_device_open(name, &dev), ORK_OK) << ork_last_error();
    std::vector<uint16_t> w(32 * 16, 0x3c00), a(32 + 1, 0x3c00);  // fp16 ones
    std::vector<float> c(16 + 1, 0.0f);
    ork_weights* h = nullptr;
    ASSERT_EQ(ork_weights_create(dev, ORK_DTYPE_FP16, 32, 16, w.data(), &h), ORK_OK) << ork_last_error();
    const auto* odd_a = reinterpret_cast<const uint8_t*>(a.data()) + 1;
    EXPECT_EQ(ork_matmul(dev, h, odd_a, 1, c.data(), nullptr), ORK_E_INVALID_ARGUMENT);
    EXPECT_STREQ(ork_last_error(), "ork_matmul: A at offset_bytes 0: the element pointer is not aligned to the "
                                   "2-byte element");
    auto* odd_c = reinterpret_cast<uint8_t*>(c.data()) + 2;
    EXPECT_EQ(ork_matmul(dev, h, a.data(), 1, odd_c, nullptr), ORK_E_INVALID_ARGUMENT);
    EXPECT_STREQ(ork_last_error(), "ork_matmul: C at offset_bytes 0: the element pointer is not aligned to the "
                                   "4-byte element");
    ASSERT_EQ(ork_matmul(dev, h, a.data(), 1, c.data(), nullptr), ORK_OK) << ork_last_error();
    for (int n = 0; n < 16; ++n) EXPECT_EQ(c[static_cast<size_t>(n)], 32.0f) << n;  // 32 ones summed, exact
    ork_weights_destroy(h);
    ork_device_close(dev);
  }
}

}  // namespace
