// The int4 K-slice width from the weights' own bound (int4_bound.h).
#include "lib/matmul/int4_bound.h"

#include <algorithm>
#include <cerrno>
#include <string>
#include <vector>

#include "driver/common/int4.h"

namespace ork::matmul {

bool int4_sums_fit_int16(const Int4ColumnSums& s) {
  // int4 activations are -8..7 (two's complement nibbles): the extremes of sum a*w.
  return 7 * s.pos + 8 * s.neg <= 32767 && 8 * s.pos + 7 * s.neg <= 32768;
}

namespace {

// Prefix sums over 32-row blocks: row b of `pos`/`neg` (N wide) holds the column sums of
// blocks 0..b-1, so a window of blocks [s, e) is row e minus row s.
struct BlockPrefix {
  int64_t blocks = 0, n = 0;
  std::vector<int32_t> pos, neg;  // (blocks + 1) x n
};

BlockPrefix block_prefix(std::span<const uint8_t> packed, int64_t k, int64_t n) {
  BlockPrefix p;
  p.blocks = (k + kKAlign - 1) / kKAlign;
  p.n = n;
  p.pos.assign(static_cast<size_t>((p.blocks + 1) * n), 0);
  p.neg.assign(p.pos.size(), 0);
  for (int64_t b = 0; b < p.blocks; ++b) {
    const auto row = static_cast<size_t>((b + 1) * n), prev = static_cast<size_t>(b * n);
    for (int64_t j = 0; j < n; ++j) {
      p.pos[row + j] = p.pos[prev + j];
      p.neg[row + j] = p.neg[prev + j];
    }
    const int64_t k1 = std::min(k, (b + 1) * kKAlign);
    for (int64_t kk = b * kKAlign; kk < k1; ++kk) {
      for (int64_t j = 0; j < n; ++j) {
        const int v = int4::value_at(packed.data(), kk * n + j);
        if (v > 0) p.pos[row + j] += v;
        if (v < 0) p.neg[row + j] -= v;
      }
    }
  }
  return p;
}

// Every window of `w` blocks (the whole K when shorter) is within the bound.
bool windows_fit(const BlockPrefix& p, int64_t w) {
  const int64_t last = std::max<int64_t>(0, p.blocks - w);
  for (int64_t s = 0; s <= last; ++s) {
    const int64_t e = std::min(p.blocks, s + w);
    const auto lo = static_cast<size_t>(s * p.n), hi = static_cast<size_t>(e * p.n);
    for (int64_t j = 0; j < p.n; ++j) {
      const Int4ColumnSums sums{p.pos[hi + j] - p.pos[lo + j], p.neg[hi + j] - p.neg[lo + j]};
      if (!int4_sums_fit_int16(sums)) return false;
    }
  }
  return true;
}

}  // namespace

Result<int64_t> int4_safe_slice_k(std::span<const uint8_t> packed, int64_t k, int64_t n) {
  if (k < 1 || n < 1 || k > (int64_t{1} << 24) || n > (int64_t{1} << 24))
    return make_error(-EINVAL, "int4 weights of K = " + std::to_string(k) + ", N = " + std::to_string(n) +
                                   ": must be 1 .. 2^24 each");
  if (static_cast<int64_t>(packed.size()) < (k * n + 1) / 2)
    return make_error(-EINVAL, "int4 weights of " + std::to_string(k) + " x " + std::to_string(n) + ": " +
                                   std::to_string(packed.size()) + " bytes, need " + std::to_string((k * n + 1) / 2));
  const BlockPrefix p = block_prefix(packed, k, n);
  // Window safety is monotone in the width (a narrower window is inside a wider one), so
  // the widest is found by bisection between the floor (always safe: 480 x 64 < 32767) and
  // the ceiling.
  int64_t lo = kInt4SliceK / kKAlign, hi = kInt4MaxSliceK / kKAlign;
  while (lo < hi) {
    const int64_t mid = (lo + hi + 1) / 2;
    if (windows_fit(p, mid)) lo = mid; else hi = mid - 1;
  }
  return lo * kKAlign;
}

namespace {

// Per byte of the nibble stream, the positive sum and the negative magnitude of its two values.
struct ByteSums {
  uint8_t pos[256], neg[256];
  constexpr ByteSums() : pos{}, neg{} {
    for (int b = 0; b < 256; ++b) {
      for (int v : {int{int4::low_value(static_cast<uint8_t>(b))}, int{int4::high_value(static_cast<uint8_t>(b))}}) {
        if (v > 0) pos[b] = static_cast<uint8_t>(pos[b] + v);
        if (v < 0) neg[b] = static_cast<uint8_t>(neg[b] - v);
      }
    }
  }
};
constexpr ByteSums kByteSums;

}  // namespace

Status int4_native_slices_fit(const Plan& p, std::span<const uint8_t> native) {
  if (p.dtype != DType::int4) return make_error(-EINVAL, "the int4 bound of a plan that is not int4");
  if (static_cast<int64_t>(native.size()) != p.b_bytes())
    return make_error(-EINVAL, "int4 weights of " + std::to_string(native.size()) + " bytes, the layout needs " +
                                   std::to_string(p.b_bytes()));
  constexpr int64_t kWa = 64, kRunBytes = kKAlign / 2;  // kernels per int4 block; one kernel's 32 K
  std::vector<Int4ColumnSums> col(static_cast<size_t>(p.np));
  for (int64_t s = 0; s < p.slices; ++s) {
    const int64_t k0 = s * p.slice_k, kt = std::min(p.slice_k, p.kp - k0);
    const uint8_t* base = native.data() + p.np * p.slice_k * s / 2;  // slices before are slice_k wide
    std::fill(col.begin(), col.end(), Int4ColumnSums{});
    // A run of 16 bytes is one kernel's 32 K values: run r is kernel (r / (kt/32 x 64)) x 64 + r % 64.
    const int64_t runs = p.np * kt / kKAlign, per_group = kt / kKAlign * kWa;
    for (int64_t r = 0; r < runs; ++r) {
      Int4ColumnSums& c = col[static_cast<size_t>(r / per_group * kWa + r % kWa)];
      for (int64_t i = 0; i < kRunBytes; ++i) {
        const uint8_t b = base[r * kRunBytes + i];
        c.pos += kByteSums.pos[b];
        c.neg += kByteSums.neg[b];
      }
    }
    for (int64_t j = 0; j < p.np; ++j) {
      const Int4ColumnSums& c = col[static_cast<size_t>(j)];
      if (!int4_sums_fit_int16(c))
        return make_error(-EINVAL, "int4 weights in K-slices " + std::to_string(p.slice_k) + " wide: column " +
                                       std::to_string(j) + " of slice " + std::to_string(s) + " (K " + std::to_string(k0) +
                                       ".." + std::to_string(k0 + kt - 1) + ") has P = " + std::to_string(c.pos) +
                                       ", Q = " + std::to_string(c.neg) + ": 7P + 8Q = " + std::to_string(7 * c.pos + 8 * c.neg) +
                                       ", 8P + 7Q = " + std::to_string(8 * c.pos + 7 * c.neg) +
                                       ", past int16 (at most 32767 and 32768): a task of that slice would saturate");
    }
  }
  return Status::success();
}

}  // namespace ork::matmul
