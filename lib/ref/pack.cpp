// Packing for the fast int8 path (pack.h): A once per call, B per chunk of panels (or once,
// for a PackedB). Padding is the encoding of zero, so the kernels always read whole tiles.
#include "lib/ref/pack.h"

#include <algorithm>
#include <bit>
#include <cstring>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace ork::ref::detail {
namespace {

// Columns 0 .. cols-1 of four K rows as one 4-byte quad per column, 16 columns per step with
// SSE2 byte/word unpacks (baseline x86-64; none elsewhere). Returns how many columns it did.
int64_t interleave_quads(const int8_t* const* r, int64_t cols, uint32_t* out) {
  int64_t c = 0;
#if defined(__SSE2__)
  for (; c + 16 <= cols; c += 16) {
    const auto load = [&](int t) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(r[t] + c)); };
    const __m128i r0 = load(0), r1 = load(1), r2 = load(2), r3 = load(3);
    const __m128i p01_lo = _mm_unpacklo_epi8(r0, r1), p01_hi = _mm_unpackhi_epi8(r0, r1);
    const __m128i p23_lo = _mm_unpacklo_epi8(r2, r3), p23_hi = _mm_unpackhi_epi8(r2, r3);
    auto* o = reinterpret_cast<__m128i*>(out + c);
    _mm_storeu_si128(o + 0, _mm_unpacklo_epi16(p01_lo, p23_lo));  // columns 0-3
    _mm_storeu_si128(o + 1, _mm_unpackhi_epi16(p01_lo, p23_lo));  // 4-7
    _mm_storeu_si128(o + 2, _mm_unpacklo_epi16(p01_hi, p23_hi));  // 8-11
    _mm_storeu_si128(o + 3, _mm_unpackhi_epi16(p01_hi, p23_hi));  // 12-15
  }
#else
  (void)r, (void)cols, (void)out;  // the scalar loop of the caller does every column
#endif
  return c;
}

// Four columns x four groups of column-major B into a panel: a 4 x 4 transpose of uint32
// (SSE2 on x86-64; a plain loop elsewhere). `cols[j]` points at group g0 of column j.
void transpose_quads(const int8_t* const* cols, uint32_t* out, int64_t nr) {
#if defined(__SSE2__)
  const auto load = [&](int j) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(cols[j])); };
  const __m128i c0 = load(0), c1 = load(1), c2 = load(2), c3 = load(3);
  const __m128i t0 = _mm_unpacklo_epi32(c0, c1), t1 = _mm_unpackhi_epi32(c0, c1);
  const __m128i t2 = _mm_unpacklo_epi32(c2, c3), t3 = _mm_unpackhi_epi32(c2, c3);
  const auto store = [&](int g, __m128i v) { _mm_storeu_si128(reinterpret_cast<__m128i*>(out + g * nr), v); };
  store(0, _mm_unpacklo_epi64(t0, t2));  // group g0 of columns 0..3
  store(1, _mm_unpackhi_epi64(t0, t2));
  store(2, _mm_unpacklo_epi64(t1, t3));
  store(3, _mm_unpackhi_epi64(t1, t3));
#else
  for (int g = 0; g < 4; ++g)
    for (int j = 0; j < 4; ++j) std::memcpy(out + g * nr + j, cols[j] + 4 * g, 4);
#endif
}

// dst[k] = src[k] + 128 as uint8 (the sign bit flipped), 32 bytes per step through fixed-size
// words: GCC's -O2 vectoriser leaves a byte loop of unknown length scalar (a quarter of a
// millisecond for M = 512, K = 2048).
void bias_bytes(const int8_t* src, uint8_t* dst, int64_t n) {
  int64_t k = 0;
  for (; k + 32 <= n; k += 32) {
    uint64_t w[4];
    std::memcpy(w, src + k, sizeof w);
    for (uint64_t& x : w) x ^= 0x8080808080808080u;
    std::memcpy(dst + k, w, sizeof w);
  }
  for (; k < n; ++k) dst[k] = static_cast<uint8_t>(src[k]) ^ 0x80u;
}

// Bytes k0 .. k_end-1 of one row into its units of a blocked A (pack_a_blocks): unit bytes
// per unit, `step` bytes between units, each byte XOR (flip & 0xff).
void copy_units(const int8_t* src, int64_t k0, int64_t k_end, uint8_t* dst, int64_t unit, int64_t step, uint32_t flip) {
  if (unit == 4) {
    for (; k0 + 4 <= k_end; k0 += 4, dst += step) {  // fixed-size copies: plain 32-bit moves
      uint32_t w;
      std::memcpy(&w, src + k0, 4);
      w ^= flip;
      std::memcpy(dst, &w, 4);
    }
  } else if (flip == 0) {
    for (; k0 + unit <= k_end; k0 += unit, dst += step) std::memcpy(dst, src + k0, static_cast<size_t>(unit));
  }
  for (int64_t j = 0; k0 < k_end; ++k0, ++j) {  // the rest byte by byte (K % unit, or biased wide units)
    if (j == unit) {
      j = 0;
      dst += step;
    }
    dst[j] = static_cast<uint8_t>(static_cast<uint8_t>(src[k0]) ^ (flip & 0xffu));
  }
}

// Eight rows (`ld` bytes apart) from byte k0 into 4-byte units of 32-byte groups (VNNI's
// blocked A), 16 K bytes per step: two 4 x 4 transposes of uint32 (SSE2 on x86-64). Returns
// where it stopped (k_end rounded down to 16 from k0); the caller copies the rest.
int64_t interleave_8_rows(const int8_t* src, int64_t ld, int64_t k0, int64_t k_end, uint8_t* dst, uint32_t flip) {
#if defined(__SSE2__)
  const __m128i x = _mm_set1_epi32(static_cast<int>(flip));
  for (; k0 + 16 <= k_end; k0 += 16, dst += 128) {
    for (int half = 0; half < 2; ++half) {  // rows 0-3, then 4-7
      const auto load = [&](int r) {
        return _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + (4 * half + r) * ld + k0)), x);
      };
      const __m128i r0 = load(0), r1 = load(1), r2 = load(2), r3 = load(3);
      const __m128i t0 = _mm_unpacklo_epi32(r0, r1), t1 = _mm_unpackhi_epi32(r0, r1);
      const __m128i t2 = _mm_unpacklo_epi32(r2, r3), t3 = _mm_unpackhi_epi32(r2, r3);
      const auto store = [&](int g, __m128i v) { _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + 32 * g + 16 * half), v); };
      store(0, _mm_unpacklo_epi64(t0, t2));  // group 0 of these 4 rows
      store(1, _mm_unpackhi_epi64(t0, t2));
      store(2, _mm_unpacklo_epi64(t1, t3));
      store(3, _mm_unpackhi_epi64(t1, t3));
    }
  }
#else
  (void)src, (void)ld, (void)k_end, (void)dst, (void)flip;  // copy_units does every byte
#endif
  return k0;
}

// A in blocks of mr rows (kernels.h a_unit), int8 or biased uint8 (AFormat; int16 pairs are
// never blocked). AMX (unit 64): one tile of mr rows x 64 K bytes is contiguous, so tile
// loads do not hit the same few L1 sets (a row stride of K bytes would). VNNI (unit 4,
// chunk-major): each K group of a block's mr rows is 4 mr contiguous bytes and each K chunk
// of all blocks one run, so the kernel's broadcasts walk one stream instead of mr rows a
// row apart. Bytes past K keep the caller's fill (the encoding of zero).
void pack_a_blocks(const Kernel& kr, std::span<const int8_t> a, Dims d, int64_t groups, uint8_t* out) {
  const int64_t rows = (d.m + kr.mr - 1) / kr.mr * kr.mr, unit = kr.a_unit, step = kr.mr * unit;
  const uint32_t flip = kr.a_format == AFormat::u8_biased ? 0x80808080u : 0u;
  const int64_t chunk = kr.a_chunk_major ? kr.chunk_groups : groups;
  for (int64_t m0 = 0; m0 < d.m; m0 += kr.mr) {
    const int8_t* src = a.data() + m0 * d.k;
    for (int64_t g0 = 0; g0 * 4 < d.k; g0 += chunk) {  // one K chunk of the block at a time
      uint8_t* dst = out + a_chunk_offset(kr, rows, groups, m0 / kr.mr, g0);
      const int64_t k_end = std::min(d.k, (g0 + chunk) * 4);
      int64_t k0 = g0 * 4;
      if (unit == 4 && kr.mr == 8 && m0 + 8 <= d.m) k0 = interleave_8_rows(src, d.k, k0, k_end, dst, flip);
      for (int64_t r = 0; r < std::min<int64_t>(kr.mr, d.m - m0); ++r) {
        copy_units(src + r * d.k, k0, k_end, dst + (k0 - g0 * 4) / unit * step + r * unit, unit, step, flip);
      }
    }
  }
}

}  // namespace

int64_t a_chunk_offset(const Kernel& kr, int64_t rows, int64_t groups, int64_t block, int64_t g0) {
  const int64_t block_bytes = int64_t{kr.mr} * groups * 4;
  if (kr.a_unit == 0) return block * block_bytes + g0 * 4;  // rows: the chunk starts g0 groups in
  if (!kr.a_chunk_major) return block * block_bytes + g0 * 4 * kr.mr;  // [M/mr][K/unit][mr][unit]
  const int64_t gn = std::min<int64_t>(kr.chunk_groups, groups - g0);  // this chunk's groups
  return g0 * 4 * rows + block * kr.mr * 4 * gn;  // every earlier chunk is full, for all rows
}

// Bytes of packed A: rows padded to a multiple of mr, `groups` 4-byte groups each.
size_t packed_a_bytes(const Kernel& kr, Dims d, int64_t groups) {
  return static_cast<size_t>((d.m + kr.mr - 1) / kr.mr * kr.mr * groups * 4);
}

// A as rows of `groups` 4-byte groups in the kernel's format into `out` (packed_a_bytes),
// padded with the encoding of zero (0, or 0x80 for biased uint8) up to the group count and
// up to a multiple of mr rows, so the kernel always reads whole tiles. `out` is scratch: it
// is filled first only when there is padding (a 128-row tile at K = 2048 has none).
void pack_a(const Kernel& kr, std::span<const int8_t> a, Dims d, int64_t groups, uint8_t* out) {
  const int64_t row_bytes = groups * 4;
  const int64_t rows = (d.m + kr.mr - 1) / kr.mr * kr.mr;
  const uint8_t zero = kr.a_format == AFormat::u8_biased ? 0x80 : 0;
  const int64_t written = kr.a_format == AFormat::int16_pairs ? 2 * d.k : d.k;  // bytes per row
  if (rows != d.m || written != row_bytes) std::memset(out, zero, packed_a_bytes(kr, d, groups));
  if (kr.a_unit > 0) return pack_a_blocks(kr, a, d, groups, out);
  for (int64_t m = 0; m < d.m; ++m) {
    const int8_t* src = a.data() + m * d.k;
    uint8_t* dst = out + m * row_bytes;
    switch (kr.a_format) {
      case AFormat::u8_biased:
        bias_bytes(src, dst, d.k);
        break;
      case AFormat::s8:
        std::memcpy(dst, src, static_cast<size_t>(d.k));
        break;
      case AFormat::int16_pairs:
        for (int64_t k = 0; k < d.k; ++k) {
          const int16_t v = src[k];
          std::memcpy(dst + 2 * k, &v, sizeof v);
        }
        break;
    }
  }
}

// Panels p0 .. p1-1 of B (nr columns each) as [panel][groups][nr][4 bytes], zero padded.
// bias[(p - p0) * nr + c] is what the tile needs added: -128 * (column sum) on VNNI (undoes
// the +128 of A), else 0. K groups outer, panels inner, so the source is read row by row
// (contiguous runs of nr columns); each group is one uint32 per column (GCC vectorises it).
void pack_panels(const Kernel& kr, std::span<const int8_t> b, Dims d, int64_t p0, int64_t p1,
                 int64_t groups, uint8_t* dst, int32_t* bias) {
  const int kg = k_per_group(kr), nr = kr.nr;
  const int64_t panel_bytes = groups * nr * 4;
  const int64_t real_groups = (d.k + kg - 1) / kg;
  // Zero only what the loop below does not write: groups past K, columns past N.
  for (int64_t p = p0; p < p1; ++p) {
    uint8_t* panel = dst + (p - p0) * panel_bytes;
    std::memset(panel + real_groups * nr * 4, 0, static_cast<size_t>((groups - real_groups) * nr * 4));
    const int64_t cols = std::min<int64_t>(nr, d.n - p * nr);
    if (cols == nr) continue;
    for (int64_t g = 0; g < real_groups; ++g) {
      std::memset(panel + (g * nr + cols) * 4, 0, static_cast<size_t>((nr - cols) * 4));
    }
  }
  std::fill(bias, bias + (p1 - p0) * nr, 0);
  static const int8_t kZeros[64] = {};  // stands in for rows past K (nr <= 64)
  for (int64_t g = 0; g * kg < d.k; ++g) {
    const int8_t* rows[4];
    for (int t = 0; t < kg; ++t) rows[t] = g * kg + t < d.k ? b.data() + (g * kg + t) * d.n : nullptr;
    for (int64_t p = p0; p < p1; ++p) {
      const int64_t n0 = p * nr, cols = std::min<int64_t>(nr, d.n - n0);
      const int8_t* r[4];
      for (int t = 0; t < kg; ++t) r[t] = rows[t] ? rows[t] + n0 : kZeros;
      auto* out = reinterpret_cast<uint32_t*>(dst + (p - p0) * panel_bytes + g * nr * 4);
      if (kg == 4) {
        const int64_t vec = interleave_quads(r, cols, out);
        for (int64_t c = vec; c < cols; ++c) {
          out[c] = uint32_t(uint8_t(r[0][c])) | uint32_t(uint8_t(r[1][c])) << 8 |
                   uint32_t(uint8_t(r[2][c])) << 16 | uint32_t(uint8_t(r[3][c])) << 24;
        }
      } else {  // two sign-extended int16
        for (int64_t c = 0; c < cols; ++c) {
          out[c] = uint32_t(uint16_t(int16_t(r[0][c]))) | uint32_t(uint16_t(int16_t(r[1][c]))) << 16;
        }
      }
      if (kr.a_format != AFormat::u8_biased) continue;
      int32_t* pb = bias + (p - p0) * nr;
      for (int64_t c = 0; c < cols; ++c) {  // modulo 2^32: K may exceed 2^17
        const int32_t sum = r[0][c] + r[1][c] + r[2][c] + r[3][c];
        pb[c] = static_cast<int32_t>(static_cast<uint32_t>(pb[c]) - static_cast<uint32_t>(128 * sum));
      }
    }
  }
}

// The same panels from column-major B (N x K: each column's K values contiguous), so one
// group of a column is one 4-byte read: whole 4 x 4 blocks of quads are transposed at once,
// the edges (K % 16, N % 4, int16 pairs) go one group at a time. `dst` and `bias` must be
// zero on entry: padding groups and columns are not written.
void pack_panels_columns(const Kernel& kr, const int8_t* bt, Dims d, int64_t p0, int64_t p1,
                         int64_t groups, uint8_t* dst, int32_t* bias) {
  const int kg = k_per_group(kr), nr = kr.nr;
  const int64_t panel_bytes = groups * nr * 4;
  const int64_t fast_groups = kg == 4 ? d.k / 16 * 4 : 0;  // groups done 4 x 4 at a time
  for (int64_t p = p0; p < p1; ++p) {
    const int64_t n0 = p * nr, cols = std::min<int64_t>(nr, d.n - n0);
    auto* panel = reinterpret_cast<uint32_t*>(dst + (p - p0) * panel_bytes);
    const int64_t fast_cols = cols / 4 * 4;
    for (int64_t c = 0; c < fast_cols; c += 4) {
      const int8_t* col[4];
      for (int j = 0; j < 4; ++j) col[j] = bt + (n0 + c + j) * d.k;
      for (int64_t g = 0; g < fast_groups; g += 4) {
        const int8_t* at[4] = {col[0] + g * 4, col[1] + g * 4, col[2] + g * 4, col[3] + g * 4};
        transpose_quads(at, panel + g * nr + c, nr);
      }
    }
    for (int64_t c = 0; c < cols; ++c) {
      const int8_t* col = bt + (n0 + c) * d.k;
      for (int64_t g = c < fast_cols ? fast_groups : 0; g * kg < d.k; ++g) {
        int8_t v[4] = {};
        std::memcpy(v, col + g * kg, static_cast<size_t>(std::min<int64_t>(kg, d.k - g * kg)));
        if (kg == 4) {
          std::memcpy(panel + g * nr + c, v, 4);
        } else {  // two sign-extended int16
          panel[g * nr + c] = uint32_t(uint16_t(int16_t(v[0]))) | uint32_t(uint16_t(int16_t(v[1]))) << 16;
        }
      }
      if (kr.a_format == AFormat::u8_biased) {  // -128 * (column sum), modulo 2^32
        int64_t sum = 0;
        for (int64_t k = 0; k < d.k; ++k) sum += col[k];
        bias[(p - p0) * nr + c] = static_cast<int32_t>(static_cast<uint32_t>(-128 * sum));
      }
    }
  }
}

// Eight bytes of a panel's group row: two columns' four int8 values each. Each byte biased to
// b + 128 (x ^ 0x80: 0..255), then summed pairwise inside the word, so each 32-bit half holds
// its column's four biased bytes' sum (at most 1020): whole-word arithmetic, one load per
// two columns, where a byte at a time costs a load each (and an ASan check each in CI's
// sanitizer build, where this was a third of an int4 ork_run's time).
static_assert(std::endian::native == std::endian::little, "a word's low half is its first column");
inline uint64_t biased_quad_sums(const int8_t* p) {
  uint64_t x;
  std::memcpy(&x, p, sizeof x);
  x ^= 0x8080808080808080u;
  x = (x & 0x00ff00ff00ff00ffu) + ((x >> 8) & 0x00ff00ff00ff00ffu);  // four 16-bit sums <= 510
  return (x & 0x0000ffff0000ffffu) + ((x >> 16) & 0x0000ffff0000ffffu);  // two 32-bit sums <= 1020
}

void column_bias(const uint8_t* panels, int64_t count, int64_t groups, int nr, int32_t* bias) {
  // A half gains at most 1020 a group: flushed every kRun groups, long before 2^32.
  constexpr int64_t kRun = int64_t{1} << 20;
  for (int64_t p = 0; p < count; ++p) {
    const auto* panel = reinterpret_cast<const int8_t*>(panels + p * groups * nr * 4);
    uint32_t sums[64] = {};  // nr <= 64; modulo 2^32 like the oracle, whatever K
    for (int64_t g0 = 0; g0 < groups; g0 += kRun) {
      const int64_t g1 = std::min(groups, g0 + kRun);
      uint64_t pairs[32] = {};
      for (int64_t g = g0; g < g1; ++g) {
        const int8_t* row = panel + g * nr * 4;
        for (int c = 0; c + 1 < nr; c += 2) pairs[c / 2] += biased_quad_sums(row + 4 * c);
        if (nr % 2 == 1) {
          const int8_t* q = row + 4 * (nr - 1);
          sums[nr - 1] += static_cast<uint32_t>(q[0] + q[1] + q[2] + q[3]);
        }
      }
      const auto bias_total = static_cast<uint32_t>(512 * (g1 - g0));  // 4 x 128 a group
      for (int c = 0; c + 1 < nr; c += 2) {
        sums[c] += static_cast<uint32_t>(pairs[c / 2]) - bias_total;
        sums[c + 1] += static_cast<uint32_t>(pairs[c / 2] >> 32) - bias_total;
      }
    }
    for (int c = 0; c < nr; ++c) bias[p * nr + c] = static_cast<int32_t>(0u - 128u * sums[c]);
  }
}

int64_t padded_groups(const Kernel& kr, int64_t k) {
  const int64_t kg = detail::k_per_group(kr);
  return ((k + kg - 1) / kg + kr.group_align - 1) / kr.group_align * kr.group_align;
}

}  // namespace ork::ref::detail
