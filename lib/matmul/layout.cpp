// Native layouts and the int8 host pack / unpack (layout.h). Formulas: docs/regcmd-contract.md section 2.
#include "lib/matmul/layout.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <string>

#include "driver/common/npu_layout.h"
#include "lib/matmul/layout_host.h"

namespace ork::matmul {

int64_t feature_index(DType dtype, int64_t m, int64_t k, int64_t rows) {
  const int64_t fa = feature_atom(dtype);  // one 16-byte atom: 16 int8, 8 fp16, 32 int4
  return (k / fa) * rows * fa + m * fa + k % fa;
}

int64_t weight_index(DType dtype, int64_t k, int64_t n, int64_t depth) {
  const int64_t wa = weight_atom(dtype);  // kernels per block: 32 int8, 16 fp16, 64 int4
  constexpr int64_t kb = hw::kKBlock;  // each kernel's K values in runs of 32
  return (n / wa) * wa * depth + (k / kb) * (wa * kb) + (n % wa) * kb + k % kb;
}

int64_t output_index(int64_t c2, int64_t m, int64_t n, int64_t rows) {
  return (n / c2) * rows * c2 + m * c2 + n % c2;
}

int64_t output_index(DType dtype, int64_t m, int64_t n, int64_t rows) {
  return output_index(output_atom(dtype), m, n, rows);
}

Status check_size(const char* what, int64_t have, int64_t need) {
  if (have == need) return {};
  return make_error(-EINVAL, std::string(what) + ": " + std::to_string(have) +
                                 " elements given, the plan needs " + std::to_string(need));
}

namespace {

// The int8 atoms (driver/common/npu_layout.h): a feature atom of 16 bytes (and elements), a
// square weight block of 32 kernels x 32 K (the transposes below rely on it being square).
constexpr int64_t kAtom = hw::kAtomBytes;
constexpr int64_t kBlock = hw::kKBlock;
static_assert(hw::weight_atom(8) == kBlock && hw::feature_atom(8) == kAtom);

Status check_int8(const Plan& plan) {
  if (plan.dtype == DType::int8) return {};
  return make_error(-EINVAL, std::string("plan dtype ") + dtype_name(plan.dtype) +
                                 ": the int8 pack/unpack needs an int8 plan");
}

#if defined(__SSE2__)
// 16x16 byte transpose, dst[c * ldd + r] = src[r * ld + c], in four SSE2 unpack stages
// (bytes, words, dwords, qwords): after stage s every lane holds 2^s rows of one column.
void transpose16(const int8_t* src, int64_t ld, int8_t* dst, int64_t ldd) {
  __m128i x[16];
  for (int i = 0; i < 16; ++i) x[i] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i * ld));
  __m128i p[2][8];  // [column half][row pair]: 16-bit lanes = (row 2i, row 2i+1) of a column
  for (int i = 0; i < 8; ++i) {
    p[0][i] = _mm_unpacklo_epi8(x[2 * i], x[2 * i + 1]);
    p[1][i] = _mm_unpackhi_epi8(x[2 * i], x[2 * i + 1]);
  }
  for (int h = 0; h < 2; ++h) {
    __m128i q[2][4];  // [column quarter][row quad]: 32-bit lanes = 4 rows of a column
    for (int j = 0; j < 4; ++j) {
      q[0][j] = _mm_unpacklo_epi16(p[h][2 * j], p[h][2 * j + 1]);
      q[1][j] = _mm_unpackhi_epi16(p[h][2 * j], p[h][2 * j + 1]);
    }
    for (int s = 0; s < 2; ++s) {
      __m128i ra[2], rb[2];  // 64-bit lanes = 8 rows of a column
      for (int k = 0; k < 2; ++k) {
        ra[k] = _mm_unpacklo_epi32(q[s][2 * k], q[s][2 * k + 1]);
        rb[k] = _mm_unpackhi_epi32(q[s][2 * k], q[s][2 * k + 1]);
      }
      int8_t* d = dst + (8 * h + 4 * s) * ldd;
      _mm_storeu_si128(reinterpret_cast<__m128i*>(d), _mm_unpacklo_epi64(ra[0], ra[1]));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(d + ldd), _mm_unpackhi_epi64(ra[0], ra[1]));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(d + 2 * ldd), _mm_unpacklo_epi64(rb[0], rb[1]));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(d + 3 * ldd), _mm_unpackhi_epi64(rb[0], rb[1]));
    }
  }
}

#endif  // __SSE2__

// One 32x32 weight block: dst[n][k] = src[k][n] for the valid kr x nc corner, zero elsewhere.
// src points at element (k0, n0) of the row-major K x N matrix with row stride `ld`.
void pack_block(const int8_t* src, int64_t ld, int64_t kr, int64_t nc, int8_t* dst) {
#if defined(__SSE2__)
  if (kr == kBlock && nc == kBlock) {  // four 16x16 transposes
    for (int64_t kh = 0; kh < 2; ++kh) {
      for (int64_t nh = 0; nh < 2; ++nh) {
        transpose16(src + kh * 16 * ld + nh * 16, ld, dst + nh * 16 * kBlock + kh * 16, kBlock);
      }
    }
    return;
  }
#endif
  std::memset(dst, 0, kBlock * kBlock);
  for (int64_t k = 0; k < kr; ++k) {
    for (int64_t n = 0; n < nc; ++n) dst[n * kBlock + k] = src[k * ld + n];
  }
}

}  // namespace

Status pack_a_int8(std::span<const int8_t> a, const Plan& plan, std::span<int8_t> out, RowRange rows) {
  if (Status s = check_int8(plan); !s) return s;
  const int64_t m_rows = plan.shape.m, k_len = plan.shape.k;
  if (Status s = check_size("A", static_cast<int64_t>(a.size()), m_rows * k_len); !s) return s;
  if (Status s = check_size("native A", static_cast<int64_t>(out.size()), plan.a_bytes()); !s) return s;
  int64_t first = 0, last = 0;
  clamp_rows(rows, m_rows, &first, &last);
  pack_atom_rows(reinterpret_cast<const uint8_t*>(a.data()), k_len, plan.mp, plan.kp,
                 reinterpret_cast<uint8_t*>(out.data()), first, last);
  return {};
}

Status pack_b_int8(std::span<const int8_t> b, const Plan& plan, std::span<int8_t> out) {
  if (Status s = check_size("B", static_cast<int64_t>(b.size()), plan.shape.k * plan.shape.n); !s) return s;
  return pack_b_int8_strided(b.data(), plan.shape.n, plan, out);
}

Status pack_b_int8_strided(const int8_t* b, int64_t ld, const Plan& plan, std::span<int8_t> out) {
  if (Status s = check_int8(plan); !s) return s;
  const int64_t k_len = plan.shape.k, n_len = plan.shape.n;
  if (ld < n_len) return make_error(-EINVAL, "pack_b_int8: row stride " + std::to_string(ld) + " < N = " + std::to_string(n_len));
  if (Status s = check_size("native B", static_cast<int64_t>(out.size()), plan.b_bytes()); !s) return s;
  int8_t* dst = out.data();
  for (int64_t s = 0; s < plan.slices; ++s) {
    const int64_t k0 = s * plan.slice_k;
    const int64_t kt = std::min(plan.slice_k, plan.kp - k0);
    // Slice layout [np/32][kt/32][32][32]: column blocks outer, K blocks inner, so `dst`
    // advances one 1024-byte block at a time.
    for (int64_t nb = 0; nb < plan.np; nb += kBlock) {
      const int64_t nc = std::clamp<int64_t>(n_len - nb, 0, kBlock);
      for (int64_t kb = k0; kb < k0 + kt; kb += kBlock, dst += kBlock * kBlock) {
        const int64_t kr = std::clamp<int64_t>(k_len - kb, 0, kBlock);
        if (kr == 0 || nc == 0) {
          std::memset(dst, 0, kBlock * kBlock);
        } else {
          pack_block(b + kb * ld + nb, ld, kr, nc, dst);
        }
      }
    }
  }
  return {};
}

namespace {

template <bool kAdd>
Status unpack_slice(std::span<const int32_t> native, const Plan& plan, std::span<int32_t> c, RowRange rows) {
  if (Status s = check_int8(plan); !s) return s;
  const int64_t m_rows = plan.shape.m, n_len = plan.shape.n;
  if (Status s = check_size("native C", static_cast<int64_t>(native.size()),
                            c_elements_per_slice(plan)); !s) {
    return s;
  }
  if (Status s = check_size("C", static_cast<int64_t>(c.size()), m_rows * n_len); !s) return s;
  int64_t first = 0, last = 0;
  clamp_rows(rows, m_rows, &first, &last);
  const int32_t* slice = native.data();
  unpack_rows(&slice, 1, plan, c.data(), !kAdd, first, last);
  return {};
}

}  // namespace

Status unpack_c_int32(std::span<const int32_t> native, const Plan& plan, std::span<int32_t> c, RowRange rows) {
  return unpack_slice<false>(native, plan, c, rows);
}

Status accumulate_c_int32(std::span<const int32_t> native, const Plan& plan, std::span<int32_t> c,
                          RowRange rows) {
  return unpack_slice<true>(native, plan, c, rows);
}

Status unpack_c_slices_int32(std::span<const int32_t> native, const Plan& plan,
                             std::span<int32_t> c) {
  const int64_t per = c_elements_per_slice(plan);
  if (Status s = check_size("native C (all slices)", static_cast<int64_t>(native.size()),
                            per * plan.slices); !s) {
    return s;
  }
  for (int64_t s = 0; s < plan.slices; ++s) {
    const auto part = native.subspan(static_cast<size_t>(s * per), static_cast<size_t>(per));
    Status st = s == 0 ? unpack_c_int32(part, plan, c) : accumulate_c_int32(part, plan, c);
    if (!st) return st;
  }
  return {};
}

}  // namespace ork::matmul
