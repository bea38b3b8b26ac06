// CORE multiply kernels. Speed matters (every test runs on the emulator), so the integer
// dot product is a plain loop GCC vectorises at -O3 without -march flags, four rows per
// pass over a column of B. Clang, in CI's sanitizer build (-O1: no vectoriser unless a loop
// asks for it), is asked by ORK_EMU_VECTORIZE; the comment above dot says what that takes.
//
// Flags for this file only, by pragma because driver/ builds one library from one source
// list: O3 so GCC vectorises the int8 dot product at any buildtype (no -march: the build
// must run anywhere), and fp-contract=off so no fused multiply-add changes the fp16 path's
// defined rounding (docs/emulator.md "CORE"; GNU C++ defaults to fp-contract=fast).
#pragma GCC optimize("O3", "fp-contract=off")

#include "driver/emu/npu/core.h"


#include <algorithm>
#include <cstring>
#include <vector>

namespace ork::emu {
namespace {

constexpr size_t kRowBlock = 4;     // rows sharing each load of a B column (4 accumulators)

typedef float F4 __attribute__((vector_size(16)));  // 4 fp32 lanes

// The integer loops below sum in uint32_t: "exact modulo 2^32" is the engine's contract
// (core.h), unsigned arithmetic says so without a signed overflow for UBSan to check at
// every add, and the bits are the same (two's complement; GCC's code is unchanged, measured
// natively and for aarch64). Vectorised, ASan still checks every load, a vector at a time.
// The three UBSan checks left out here (no_sanitize) are on the pointers alone: a null
// pointer, an unaligned int16_t, an address that wraps; the one caller passes the data of
// std::vectors sized mc x kt and cols x kt (BuiltinEngine::multiply), so none can fire, and
// each check branches to a handler at every load, which keeps clang from vectorising.
// Measured in docs/reliability.md "CI time" (the runbook under build-san).
#if defined(__clang__)
#define ORK_EMU_VECTORIZE _Pragma("clang loop vectorize(enable) interleave(enable)")
#else
#define ORK_EMU_VECTORIZE
#endif
#define ORK_EMU_POINTERS_CHECKED_BY_CALLER __attribute__((no_sanitize("null", "alignment", "pointer-overflow")))

ORK_EMU_POINTERS_CHECKED_BY_CALLER
inline uint32_t dot(const int16_t* a, const int16_t* b, size_t n) {
  uint32_t s = 0;
  ORK_EMU_VECTORIZE
  for (size_t k = 0; k < n; ++k) s += uint32_t(a[k]) * uint32_t(b[k]);
  return s;
}

// Four rows against one column: each B element is loaded once for four products.
ORK_EMU_POINTERS_CHECKED_BY_CALLER
inline void dot4(const int16_t* a, size_t kt, const int16_t* b, int32_t* out, size_t stride) {
  uint32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  ORK_EMU_VECTORIZE
  for (size_t k = 0; k < kt; ++k) {
    const uint32_t bv = uint32_t(b[k]);
    s0 += uint32_t(a[k]) * bv;
    s1 += uint32_t(a[kt + k]) * bv;
    s2 += uint32_t(a[2 * kt + k]) * bv;
    s3 += uint32_t(a[3 * kt + k]) * bv;
  }
  out[0] = int32_t(s0);
  out[stride] = int32_t(s1);
  out[2 * stride] = int32_t(s2);
  out[3 * stride] = int32_t(s3);
}

}  // namespace

void matmul_i16(const int16_t* a, const int16_t* bt, int32_t* c, size_t mc, size_t kt, size_t cols) {
  size_t m0 = 0;
  for (; m0 + kRowBlock <= mc; m0 += kRowBlock)
    for (size_t n = 0; n < cols; ++n) dot4(a + m0 * kt, kt, bt + n * kt, c + m0 * cols + n, cols);
  for (; m0 < mc; ++m0)  // the last 1..3 rows
    for (size_t n = 0; n < cols; ++n) c[m0 * cols + n] = int32_t(dot(a + m0 * kt, bt + n * kt, kt));
}

void matmul_f16_block16(const float* a, const float* b, float* c, size_t mc, size_t kt, size_t width,
                        size_t c_stride) {
  for (size_t m = 0; m < mc; ++m) {
    const float* row = a + m * kt;
    F4 acc[4] = {};
    // k outermost: every lane sees its adds in increasing k. Written with GCC vector types
    // (element-wise IEEE ops, any target) because the auto-vectoriser turned the plain
    // 16-wide loop into shuffles across k, 10x slower.
    for (size_t k = 0; k < kt; ++k) {
      const F4 av = F4{} + row[k];
      const float* brow = b + k * 16;
      for (int q = 0; q < 4; ++q) {
        F4 bv;
        std::memcpy(&bv, brow + 4 * q, sizeof bv);
        acc[q] = acc[q] + av * bv;
      }
    }
    float out[16];
    std::memcpy(out, acc, sizeof out);
    std::copy(out, out + width, c + m * c_stride);
  }
}

namespace {

// int8 operands widened for matmul_i16, vectorised as dot4 is (the comment above dot): under
// build-san std::copy's element loop took as long as the multiply itself.
ORK_EMU_POINTERS_CHECKED_BY_CALLER
void widen_int8(const int8_t* src, size_t n, std::vector<int16_t>& dst) {
  dst.resize(n);
  int16_t* out = dst.data();
  ORK_EMU_VECTORIZE
  for (size_t i = 0; i < n; ++i) out[i] = src[i];
}

struct PreparedI16 final : PreparedInt8 {
  std::vector<int16_t> bt;  // cols x kt
  size_t kt = 0, cols = 0;
  size_t bytes() const override { return bt.size() * sizeof(int16_t); }
};

class BuiltinEngine final : public Int8Engine {
 public:
  std::shared_ptr<const PreparedInt8> prepare(const int8_t* bt, size_t kt, size_t cols) const override {
    auto p = std::make_shared<PreparedI16>();
    widen_int8(bt, kt * cols, p->bt);
    p->kt = kt;
    p->cols = cols;
    return p;
  }
  void multiply(const int8_t* a, size_t mc, const PreparedInt8& b, const Int32Out& c) const override {
    const auto& w = static_cast<const PreparedI16&>(b);
    thread_local std::vector<int16_t> a16;
    thread_local std::vector<int32_t> rows;  // row-major C, then placed where `c` says
    widen_int8(a, mc * w.kt, a16);
    rows.resize(mc * w.cols);
    matmul_i16(a16.data(), w.bt.data(), rows.data(), mc, w.kt, w.cols);
    for (size_t m = 0; m < mc; ++m)
      for (size_t n = 0; n < w.cols; ++n)
        c.base[(n / c.group) * c.group_stride + m * c.row_stride + n % c.group] = rows[m * w.cols + n];
  }
};

}  // namespace

const Int8Engine& builtin_int8_engine() {
  static const BuiltinEngine engine;
  return engine;
}

}  // namespace ork::emu

#undef ORK_EMU_VECTORIZE
#undef ORK_EMU_POINTERS_CHECKED_BY_CALLER
