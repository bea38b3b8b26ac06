// The oracle (oracle.h). Deliberately naive: one loop nest per dtype, no blocking, no
// vectors. Built with -ffp-contract=off (lib/ref/meson.build) so the fp16 sums never fuse.
#include "lib/ref/oracle.h"

#include <cerrno>
#include <cstring>
#include <string>

#include "driver/common/fp16.h"
#include "lib/ref/int4.h"

namespace ork::ref {

namespace {

std::string dims_text(Dims d) {
  return "M = " + std::to_string(d.m) + ", K = " + std::to_string(d.k) +
         ", N = " + std::to_string(d.n);
}

Status size_error(const char* what, size_t have, __int128 need, Dims d) {
  return make_error(-EINVAL, std::string(what) + " has " + std::to_string(have) +
                                 " elements, " + dims_text(d) + " needs " +
                                 std::to_string(static_cast<long long>(need)));
}

}  // namespace

Status check_operands(Dims d, size_t a_size, size_t b_size, size_t c_size) {
  for (auto [name, v] : {std::pair{"M", d.m}, {"K", d.k}, {"N", d.n}}) {
    if (v < 1) return make_error(-EINVAL, std::string(name) + " = " + std::to_string(v) + ": must be >= 1");
  }
  using W = __int128;  // products of two int64 dimensions cannot overflow here
  if (W(a_size) != W(d.m) * d.k) return size_error("A", a_size, W(d.m) * d.k, d);
  if (W(b_size) != W(d.k) * d.n) return size_error("B", b_size, W(d.k) * d.n, d);
  if (W(c_size) != W(d.m) * d.n) return size_error("C", c_size, W(d.m) * d.n, d);
  return {};
}

Status matmul_int8(std::span<const int8_t> a, std::span<const int8_t> b, std::span<int32_t> c,
                   Dims d) {
  if (Status s = check_operands(d, a.size(), b.size(), c.size()); !s) return s;
  for (int64_t m = 0; m < d.m; ++m) {
    for (int64_t n = 0; n < d.n; ++n) {
      int64_t acc = 0;
      for (int64_t k = 0; k < d.k; ++k) acc += int64_t{a[m * d.k + k]} * b[k * d.n + n];
      c[m * d.n + n] = static_cast<int32_t>(acc);  // modular since C++20
    }
  }
  return {};
}

namespace {

// The one fp16 dot product every fp16 result comes from (the defined order of oracle.h).
float dot_fp16(std::span<const uint16_t> a, std::span<const uint16_t> b, Dims d, int64_t m,
               int64_t n) {
  float acc = 0.0f;
  for (int64_t k = 0; k < d.k; ++k) {
    const float product = half_to_float(a[m * d.k + k]) * half_to_float(b[k * d.n + n]);
    acc = acc + product;
  }
  return acc;
}

}  // namespace

Status matmul_fp16(std::span<const uint16_t> a, std::span<const uint16_t> b, std::span<float> c,
                   Dims d) {
  if (Status s = check_operands(d, a.size(), b.size(), c.size()); !s) return s;
  for (int64_t m = 0; m < d.m; ++m) {
    for (int64_t n = 0; n < d.n; ++n) c[m * d.n + n] = dot_fp16(a, b, d, m, n);
  }
  return {};
}

Status matmul_fp16_to_fp16(std::span<const uint16_t> a, std::span<const uint16_t> b,
                           std::span<uint16_t> c, Dims d) {
  if (Status s = check_operands(d, a.size(), b.size(), c.size()); !s) return s;
  for (int64_t m = 0; m < d.m; ++m) {
    for (int64_t n = 0; n < d.n; ++n) c[m * d.n + n] = float_to_half(dot_fp16(a, b, d, m, n));
  }
  return {};
}

// Partial sum of slice [k0, k1) in the defined order, then added to the running total.
__attribute__((noinline)) float fp16_sliced_cell(const uint16_t* a, const uint16_t* b, int64_t ldb, int64_t k,
                                                 int64_t slice_k) {
  float total = 0.0f;
  for (int64_t k0 = 0; k0 < k; k0 += slice_k) {
    float acc = 0.0f;
    const int64_t k1 = k0 + slice_k < k ? k0 + slice_k : k;
    for (int64_t i = k0; i < k1; ++i) acc = acc + half_to_float(a[i]) * half_to_float(b[i * ldb]);
    total = k0 == 0 ? acc : total + acc;
  }
  return total;
}

namespace {

float dot_fp16_sliced(std::span<const uint16_t> a, std::span<const uint16_t> b, Dims d, int64_t m, int64_t n,
                      int64_t slice_k) {
  return fp16_sliced_cell(a.data() + m * d.k, b.data() + n, d.n, d.k, slice_k);
}

Status check_slice(int64_t slice_k) {
  if (slice_k >= 1) return {};
  return make_error(-EINVAL, "slice_k = " + std::to_string(slice_k) + ": must be >= 1");
}

}  // namespace

Status matmul_fp16_sliced(std::span<const uint16_t> a, std::span<const uint16_t> b, std::span<float> c,
                          Dims d, int64_t slice_k) {
  if (Status s = check_operands(d, a.size(), b.size(), c.size()); !s) return s;
  if (Status s = check_slice(slice_k); !s) return s;
  for (int64_t m = 0; m < d.m; ++m)
    for (int64_t n = 0; n < d.n; ++n) c[m * d.n + n] = dot_fp16_sliced(a, b, d, m, n, slice_k);
  return {};
}

Status matmul_fp16_sliced_to_fp16(std::span<const uint16_t> a, std::span<const uint16_t> b,
                                  std::span<uint16_t> c, Dims d, int64_t slice_k) {
  if (Status s = check_operands(d, a.size(), b.size(), c.size()); !s) return s;
  if (Status s = check_slice(slice_k); !s) return s;
  for (int64_t m = 0; m < d.m; ++m)
    for (int64_t n = 0; n < d.n; ++n) c[m * d.n + n] = float_to_half(dot_fp16_sliced(a, b, d, m, n, slice_k));
  return {};
}

// Whether any of eight int8 values lies outside -8..7: per byte (b + 8) mod 256 over 15. The
// add leaves each byte's top bit out, so no carry crosses into the next byte. A word at a
// time: the weights of every int4 call pass here.
inline bool int4_word_has_outlier(const int8_t* p) {
  uint64_t x;
  std::memcpy(&x, p, sizeof x);
  const uint64_t plus8 = ((x & 0x7f7f7f7f7f7f7f7fu) + 0x0808080808080808u) ^ (x & 0x8080808080808080u);
  return (plus8 & 0xf0f0f0f0f0f0f0f0u) != 0;
}

Status check_int4_values(const char* name, std::span<const int8_t> v) {
  size_t from = 0;  // words before it hold no outlier
  while (from + 8 <= v.size() && !int4_word_has_outlier(v.data() + from)) from += 8;
  for (size_t i = from; i < v.size(); ++i) {
    if (v[i] < -8 || v[i] > 7) {
      return make_error(-EINVAL, std::string(name) + "[" + std::to_string(i) + "] = " +
                                     std::to_string(v[i]) + ": int4 values must be in -8..7");
    }
  }
  return {};
}

Status matmul_int4(std::span<const int8_t> a, std::span<const int8_t> b, std::span<int32_t> c,
                   Dims d) {
  if (Status s = check_operands(d, a.size(), b.size(), c.size()); !s) return s;
  if (Status s = check_int4_values("A", a); !s) return s;
  if (Status s = check_int4_values("B", b); !s) return s;
  for (int64_t m = 0; m < d.m; ++m) {
    for (int64_t n = 0; n < d.n; ++n) {
      int64_t acc = 0;
      for (int64_t k = 0; k < d.k; ++k) acc += int64_t{a[m * d.k + k]} * b[k * d.n + n];
      c[m * d.n + n] = static_cast<int32_t>(acc);
    }
  }
  return {};
}


}  // namespace ork::ref
