// The fused quantised matmul of the cpu device (group_kernel.h): tiers, packing of the
// weights (once) and of A (per call), the threads over column strips, the portable kernel.
#include "lib/quant/group_kernel.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "driver/common/cpu_features.h"
#include "lib/ref/fast.h"
#include "lib/ref/kernels.h"
#include "lib/ref/split.h"

namespace ork::quant::detail {
namespace {

// Up to this many rows a call is bound by reading B (split.h's bytes rule), as lib/ref's short M.
constexpr int64_t kGroupShortM = 8;
// Short M threads by split.h's rule, as lib/ref's int8 does: a thread per 1 MiB of packed B
// (docs/cpu-reference.md "Decode of per-group weights on two threads"). On a quiet 2-vCPU
// Intel Xeon (2 MiB L2 a core), fused_qmatmul alone, groups of 32, medians of 100-300 calls,
// 1 against 2 threads, two runs each: M = 1 at K x N = 2048 x 2048 194-217 us against 79-85,
// M = 4 180-189 against 83-93, M = 1 at 4096 x 8192 1,663-1,771 against 839-877, at 3584 x
// 18944 3,164-3,307 against 1,588-1,958. (A one-thread rule up to 64 MiB, measured at load
// average 16 on an AMD EPYC, where a second thread waits for a CPU, is what this replaces.)

// amx packs its weights as vnni does (its short calls run vnni's kernel on them).
bool vnni_packing(GroupTier t) { return t == GroupTier::vnni || t == GroupTier::amx; }

// Bytes of one packed weight value: avx2's are int16, the others int8.
int b_value_bytes(GroupTier t) { return t == GroupTier::avx2 ? 2 : 1; }

int64_t round_up(int64_t x, int64_t to) { return (x + to - 1) / to * to; }

// The part of the weights' code offset (affine imports) added to the codes at packing, so the
// kernel's accumulators end at the format's sums with no per-row term: all of it where the
// format's codes fit the packed value (avx2's int16; int4's stored -8..7 + an offset <= 8 is
// 0..15, an int8 on the others: qweights.cpp bounds the offset by qmax + 1), none for int8
// weights on the int8 tiers (stored 127 + 128 would not fit), which keep the per-row shift.
int32_t folded_offset(const QuantWeights& w, GroupTier t) {
  return t == GroupTier::avx2 || w.scheme().bits == Bits::int4 ? w.code_offset() : 0;
}

// Group g's rows of the weights into every strip (group_kernel.h GroupPacked).
void pack_group(const QuantWeights& w, int64_t g, GroupPacked& p, std::vector<int8_t>& codes) {
  const int64_t rows = w.group_rows(g), n = w.n(), S = p.strip, unit = group_tier_unit(p.tier);
  const int64_t strip_bytes = p.group_off.back(), vb = b_value_bytes(p.tier);
  const int32_t fold = folded_offset(w, p.tier);
  codes.resize(static_cast<size_t>(rows * n));
  w.widen_rows(g * p.width, rows, codes);
  for (int64_t s = 0; s < p.strips; ++s)
    for (int64_t j = 0; j < S && s * S + j < n; ++j) {
      const int64_t col = s * S + j;
      int64_t sum = 0;
      for (int64_t kk = 0; kk < rows; ++kk) {
        const auto v = static_cast<int16_t>(codes[static_cast<size_t>(kk * n + col)] + fold);
        sum += v;
        const int64_t at = s * strip_bytes + p.group_off[static_cast<size_t>(g)] +
                           ((kk / unit * S + j) * unit + kk % unit) * vb;
        std::memcpy(p.b.data() + at, &v, static_cast<size_t>(vb));  // little-endian: int8 is the low byte
      }
      const auto cell = static_cast<size_t>((s * p.groups + g) * S + j);
      p.scales[cell] = w.scales()[static_cast<size_t>(g * n + col)];
      if (!p.mins.empty()) p.mins[cell] = w.mins()[static_cast<size_t>(g * n + col)];
      if (!p.bias.empty()) p.bias[cell] = static_cast<int32_t>(static_cast<uint32_t>(-128 * sum));
    }
}

// One row of A in the tier's format, padded to `kp` values (padding multiplies zero weights).
// vnni: row r of a block of R rows, quad q at dst[(q R + r) 4] (group_kernel.h StripCall).
// amx: the codes as they are.
void pack_a_row(const int8_t* src, int64_t k, int64_t kp, GroupTier t, int r, int R, uint8_t* dst) {
  if (t == GroupTier::amx) {
    std::memcpy(dst, src, static_cast<size_t>(k));
    std::memset(dst + k, 0, static_cast<size_t>(kp - k));
  } else if (t == GroupTier::vnni) {  // code + 128 is the code's byte XOR 0x80: a quad a step
    int64_t q = 0;
    for (; 4 * q + 4 <= k; ++q) {
      uint32_t v;
      std::memcpy(&v, src + 4 * q, sizeof v);
      v ^= 0x80808080u;
      std::memcpy(dst + (q * R + r) * 4, &v, sizeof v);
    }
    for (; 4 * q < kp; ++q)  // the last quad: the values past K are code 0
      for (int64_t j = 0; j < 4; ++j)
        dst[(q * R + r) * 4 + j] = 4 * q + j < k ? static_cast<uint8_t>(src[4 * q + j] + 128) : uint8_t{128};
  } else {
    auto* d16 = reinterpret_cast<int16_t*>(dst);
    for (int64_t j = 0; j < k; ++j) d16[j] = src[j];
    std::fill(d16 + k, d16 + kp, int16_t{0});
  }
}

int32_t code_sum(const int8_t* p, int64_t n) {
#if defined(__x86_64__)
  return code_sum_sse2(p, n);
#else
  int32_t s = 0;
  for (int64_t i = 0; i < n; ++i) s += p[i];
  return s;
#endif
}

// A as the kernels read it, kept per calling thread from call to call (only ever grown):
// the codes in the tier's format (vnni: in blocks of the rows of a kernel call) and, for
// affine weights, each row's code sum per group, [M][groups], as int32 (the code-offset
// shift) and as float (the m term; exact: |s| <= 128 x the width). One pass per row on
// lib/ref's kept threads by activations.h's rule (a_pass_threads: one per 1 MiB of A's
// floats): on the calling thread alone the sums were a scalar pass per call.
struct PreparedA {
  const uint8_t* a = nullptr;
  int64_t stride = 0;
  const int32_t* gsum = nullptr;
  const float* gsum_f = nullptr;
};

// amx: every row padded to whole chunks of its last group (group_kernel.h strip_amx), and the
// rows to whole tiles.
int64_t padded_k(GroupTier t, int64_t k, const GroupPacked& b) {
  constexpr int64_t row = ref::detail::kAmxTileBytes;
  if (t == GroupTier::amx) return round_up((b.groups - 1) * b.width + amx_chunks(b.width) * row, row);
  return round_up(k, group_tier_unit(t));
}
int64_t padded_m(GroupTier t, int64_t m) { return t == GroupTier::amx ? round_up(m, ref::detail::kAmxTileRows) : m; }

// t: the call's tier (call_tier).
PreparedA prepare_a(const QuantActivations& qa, const GroupPacked& b, GroupTier t, int most_threads) {
  thread_local std::vector<uint8_t> buf;
  thread_local std::vector<int32_t> sums;
  thread_local std::vector<float> sums_f;
  const bool packed = t != GroupTier::portable, with_sums = b.code_offset != 0 || !b.mins.empty();
  const int64_t kp = padded_k(t, qa.k, b), mp = padded_m(t, qa.m);
  PreparedA out{.a = reinterpret_cast<const uint8_t*>(qa.codes.data()), .stride = qa.k};
  if (packed) out.stride = kp * (t == GroupTier::avx2 ? 2 : 1);
  if (packed && buf.size() < static_cast<size_t>(mp * out.stride)) buf.resize(static_cast<size_t>(mp * out.stride));
  if (mp > qa.m)  // amx: the last tile's rows past M are zero codes
    std::memset(buf.data() + qa.m * out.stride, 0, static_cast<size_t>((mp - qa.m) * out.stride));
  if (with_sums) sums.resize(static_cast<size_t>(qa.m * b.groups)), sums_f.resize(sums.size());
  if (!packed && !with_sums) return out;
  // The calling thread's buffers: a worker naming `buf` in the loop would get its own.
  uint8_t* const dst = packed ? buf.data() : nullptr;
  int32_t* const s = with_sums ? sums.data() : nullptr;
  float* const sf = with_sums ? sums_f.data() : nullptr;
  ref::detail::for_panel_chunks(a_pass_threads(qa.m, qa.k, most_threads), qa.m, [&](int64_t r0, int64_t r1) {
    for (int64_t i = r0; i < r1; ++i) {
      const int8_t* row = qa.codes.data() + i * qa.k;
      if (dst != nullptr) {  // vnni: in the kernel calls' row blocks (fused_qmatmul), else rows
        const RowBlock blk = t == GroupTier::vnni ? row_block_of(t, qa.m, i) : RowBlock{i, 1};
        pack_a_row(row, qa.k, kp, t, static_cast<int>(i - blk.start), blk.rows, dst + blk.start * out.stride);
      }
      for (int64_t g = 0; g < b.groups && s != nullptr; ++g) {
        const auto at = static_cast<size_t>(i * b.groups + g);
        s[at] = code_sum(row + g * b.width, std::min(b.width, qa.k - g * b.width));
        sf[at] = static_cast<float>(s[at]);
      }
    }
  }, kAPassRowsPerGrab);
  if (packed) out.a = dst;
  if (with_sums) out.gsum = s, out.gsum_f = sf;
  return out;
}

// The byte layout's strips two codes a byte (GroupPacked::nibbles), where every packed value
// (the padding's zeros too) lies in 16 consecutive ones (int4's -8..7, or 0..15 with a folded
// offset); else the bytes stay.
void to_nibbles(GroupPacked& p) {
  const int64_t bytes = p.strips * p.group_off.back();  // amx's slack is the calls' to add
  const auto* v = reinterpret_cast<const int8_t*>(p.b.data());
  const auto [lo, hi] = std::minmax_element(v, v + bytes);
  const auto base = std::min<int8_t>(*lo, 0);
  if (std::max<int>(*hi, 0) - base > 15) return;
  std::vector<uint8_t> nib(static_cast<size_t>((bytes + kAmxBSlack) / 2));  // amx reads nibbles past the strips too
  for (int64_t run = 0; run < bytes; run += 128)
    for (int64_t i = 0; i < 64; ++i)
      nib[static_cast<size_t>(run / 2 + i)] =
          static_cast<uint8_t>((v[run + i] - base) | (v[run + 64 + i] - base) << 4);
  p.b = std::move(nib);
  p.nibbles = true;
  p.nibble_base = base;
}

// Strips [s0, s1) of B in the byte layout: the packed bytes, or (nibbles) widened into this
// thread's kept buffer, readable kAmxBSlack bytes past them (amx's tiles; the values there
// only ever multiply A's zero padding).
const uint8_t* strips_as_bytes(const GroupPacked& b, int64_t s0, int64_t s1) {
  const int64_t strip_bytes = b.group_off.back();
  if (!b.nibbles) return b.b.data() + s0 * strip_bytes;
  thread_local std::vector<uint8_t> wide;
  const auto need = static_cast<size_t>((s1 - s0) * strip_bytes + kAmxBSlack);
  if (wide.size() < need) wide.assign(need, 0);
  unpack_nibbles(b.b.data() + s0 * strip_bytes / 2, (s1 - s0) * strip_bytes, b.nibble_base, wide.data());
  return wide.data();
}

// Where a call's strips of B come from: the packed bytes, the nibbles themselves (the vnni
// kernel reads them at short M, where B is read once and its bytes are the bound; the amx
// kernel up to kAmxNibbleRows, widening in L1), or the kept buffer they widen into
// (strips_as_bytes). load(s0, s1) makes strips [s0, s1) readable.
struct StripSource {
  const GroupPacked& b;
  bool read_nibbles;
  const uint8_t* base = nullptr;
  int64_t first = 0;
  bool widens() const { return b.nibbles && !read_nibbles; }
  int64_t stride() const { return b.group_off.back() / (read_nibbles ? 2 : 1); }
  void load(int64_t s0, int64_t s1) {
    first = s0;
    base = read_nibbles ? b.b.data() + s0 * stride() : strips_as_bytes(b, s0, s1);
  }
  const uint8_t* at(int64_t s) const { return base + (s - first) * stride(); }
};

using StripFn = void (*)(const StripCall&);
StripFn strip_fn(GroupTier t) {
#if defined(__x86_64__)
  if (t == GroupTier::amx) return strip_amx;
  if (t == GroupTier::vnni) return strip_vnni;
  if (t == GroupTier::avx2) return strip_avx2;
#endif
  (void)t;
  return strip_portable;
}

}  // namespace

const char* group_tier_name(GroupTier t) {
  switch (t) {
    case GroupTier::portable: return "portable";
    case GroupTier::avx2: return "avx2";
    case GroupTier::vnni: return "vnni";
    case GroupTier::amx: return "amx";
  }
  return "unknown";
}

bool group_tier_supported(GroupTier t) {
#if defined(__x86_64__)
  if (t == GroupTier::avx2) return cpu::has(cpu::kAvx2);
  if (t == GroupTier::vnni) return cpu::has(cpu::kAvx512f | cpu::kAvx512bw | cpu::kAvx512vnni);
  if (t == GroupTier::amx)  // its short calls run vnni's kernel
    return group_tier_supported(GroupTier::vnni) && cpu::has(cpu::kAmxInt8) && ref::detail::amx_usable();
#endif
  return t == GroupTier::portable;
}

std::vector<GroupTier> supported_group_tiers() {
  std::vector<GroupTier> out;
  for (GroupTier t : {GroupTier::portable, GroupTier::avx2, GroupTier::vnni, GroupTier::amx})
    if (group_tier_supported(t)) out.push_back(t);
  return out;
}

GroupTier best_group_tier() {  // per call, from the features (cpu_features.h)
  if (group_tier_supported(GroupTier::amx)) return GroupTier::amx;
  if (group_tier_supported(GroupTier::vnni)) return GroupTier::vnni;
  return group_tier_supported(GroupTier::avx2) ? GroupTier::avx2 : GroupTier::portable;
}

int group_tier_rows(GroupTier t) { return t == GroupTier::amx ? ref::detail::kAmxTileRows : t == GroupTier::vnni ? 6 : 4; }

GroupTier call_tier(GroupTier t, int64_t m) { return t == GroupTier::amx && m < kAmxMinRows ? GroupTier::vnni : t; }

RowBlock row_block_of(GroupTier t, int64_t m, int64_t i) {
  const int64_t r = group_tier_rows(t), rest = m % r;
  const int64_t joined = t == GroupTier::vnni && m > r && rest >= 1 && rest <= kStripRows - r ? m - r - rest : m;
  if (i >= joined) return {joined, static_cast<int>(m - joined)};
  const int64_t start = i / r * r;
  return {start, static_cast<int>(std::min(r, m - start))};
}
int group_tier_unit(GroupTier t) { return vnni_packing(t) ? 4 : t == GroupTier::avx2 ? 2 : 1; }
int group_tier_strip(GroupTier t) { return vnni_packing(t) ? 32 : 16; }

Result<GroupPacked> pack_group_weights(const QuantWeights& w, GroupTier tier, const PackOptions& o) {
  if (!group_tier_supported(tier))
    return make_error(-EOPNOTSUPP, fmt::format("fused quantised matmul: tier {} not supported by this CPU",
                                               group_tier_name(tier)));
  GroupPacked p{.tier = tier, .k = w.k(), .n = w.n(), .width = w.group_width(), .groups = w.groups(),
                .strip = group_tier_strip(tier), .strips = 0, .group_off = {0}, .b = {}, .bias = {}, .scales = {}};
  p.strips = (p.n + p.strip - 1) / p.strip;
  const int64_t unit = group_tier_unit(tier), step = p.strip * unit * b_value_bytes(tier);
  for (int64_t g = 0; g < p.groups; ++g)
    p.group_off.push_back(p.group_off.back() + (w.group_rows(g) + unit - 1) / unit * step);
  // amx's tiles read a short last group whole: past the last strip, zero bytes (times A's zero
  // padding either way).
  const int64_t slack = tier == GroupTier::amx ? kAmxBSlack : 0;
  p.b.assign(static_cast<size_t>(p.strips * p.group_off.back() + slack), 0);
  p.scales.assign(static_cast<size_t>(p.strips * p.groups * p.strip), 0.0f);
  if (vnni_packing(tier)) p.bias.assign(p.scales.size(), 0);
  if (!w.mins().empty()) p.mins.assign(p.scales.size(), 0.0f);
  p.code_offset = w.code_offset() - folded_offset(w, tier);
  std::vector<int8_t> codes;
  for (int64_t g = 0; g < p.groups; ++g) pack_group(w, g, p, codes);
  if (o.nibbles && vnni_packing(tier) && w.scheme().bits == Bits::int4)
    to_nibbles(p);
  return p;
}

void unpack_nibbles(const uint8_t* src, int64_t bytes, int8_t base, uint8_t* dst) {
#if defined(__x86_64__)
  if (cpu::has(cpu::kAvx512f | cpu::kAvx512bw)) return unpack_nibbles_avx512(src, bytes, base, dst);
#endif
  for (int64_t run = 0; run < bytes; run += 128)
    for (int64_t i = 0; i < 64; ++i) {
      const uint8_t v = src[run / 2 + i];
      dst[run + i] = static_cast<uint8_t>((v & 0xf) + base);
      dst[run + 64 + i] = static_cast<uint8_t>((v >> 4) + base);
    }
}

Status fused_qmatmul(const QuantActivations& qa, const GroupPacked& b, std::span<float> c, const FusedOptions& o) {
  if (qa.k != b.k) return make_error(-EINVAL, fmt::format("A has K = {}, the weights K = {}", qa.k, b.k));
  if (c.size() != static_cast<size_t>(qa.m * b.n))
    return make_error(-EINVAL, fmt::format("C holds {} floats, M x N = {}", c.size(), qa.m * b.n));
  if (o.threads < 0) return make_error(-EINVAL, fmt::format("threads = {}: must be >= 0", o.threads));
  const GroupTier tier = call_tier(b.tier, qa.m);
  const PreparedA pa = prepare_a(qa, b, tier, o.threads);
  const int64_t m = qa.m;
  // Short M reads B once per call (bound by its bytes), as lib/ref's short-M path.
  const int threads = ref::detail::split_threads(o.threads, m * b.k * b.n, static_cast<int64_t>(b.bytes()),
                                                 m <= kGroupShortM, b.strips);
  if (o.threads_used) *o.threads_used = threads;
  const StripFn fn = strip_fn(tier);
  ref::detail::for_panel_chunks(threads, b.strips, [&](int64_t s0, int64_t s1) {
    float same[kMostCallRows];  // per-tensor: the one scale for every row
    std::fill(same, same + kMostCallRows, qa.scales[0]);
#if defined(__x86_64__)
    if (tier == GroupTier::amx) amx_group_begin(b.width);  // this thread's tile shapes
#endif
    StripSource src{b, b.nibbles && m <= (tier == GroupTier::amx ? kAmxNibbleRows : kGroupShortM)};
    const auto call = [&](int64_t s, int64_t r0) {  // strip s for the row block from r0; its rows
      const auto cell = static_cast<size_t>(s * b.groups * b.strip);
      const RowBlock blk = row_block_of(tier, m, r0);
      StripCall x{.a = pa.a + r0 * pa.stride, .a_stride = pa.stride, .width = b.width, .rows = blk.rows,
                  .cols = static_cast<int>(std::min(b.strip, b.n - s * b.strip)),
                  .b = src.at(s), .group_off = b.group_off.data(), .groups = b.groups,
                  .bias = b.bias.empty() ? nullptr : b.bias.data() + cell, .scales = b.scales.data() + cell,
                  .sa = qa.scheme.per_row ? qa.scales.data() + r0 : same, .c = c.data() + r0 * b.n + s * b.strip,
                  .ldc = b.n, .gsum = nullptr, .gsum_f = nullptr,
                  .mins = b.mins.empty() ? nullptr : b.mins.data() + cell, .code_offset = b.code_offset,
                  .nibbles = src.read_nibbles, .nibble_base = b.nibble_base};
      if (pa.gsum != nullptr) x.gsum = pa.gsum + r0 * b.groups, x.gsum_f = pa.gsum_f + r0 * b.groups;
      fn(x);
      return blk.rows;
    };
    // amx: row blocks outside the grab's strips, so a block of A (16 rows x K bytes: 56 KiB at
    // K = 3584) comes from L3 once per grab rather than once per strip, while the grab's strips
    // of B stay in L2: 5-6 % less time at M = 128 and 512 x 3584 x 18944, one thread, 6
    // processes each way (docs/cpu-reference.md "Groups on AMX"); nibbles widen once a grab.
    // The register tiers keep the order they were tuned in (widening a strip at a time).
    if (tier == GroupTier::amx) {
      src.load(s0, s1);
      for (int64_t r0 = 0, rows = 0; r0 < m; r0 += rows)
        for (int64_t s = s0; s < s1; ++s) rows = call(s, r0);
    } else {
      for (int64_t s = s0; s < s1; ++s) {
        if (src.widens() || s == s0) src.load(s, src.widens() ? s + 1 : s1);
        for (int64_t r0 = 0; r0 < m; r0 += call(s, r0)) {
        }
      }
    }
#if defined(__x86_64__)
    if (tier == GroupTier::amx) amx_group_end();
#endif
  });
  return Status::success();
}

// The definition as loops: per group the rows' integer sums over the strip, then the
// group's term added to each cell's running sum; C = t x sa.
void strip_portable(const StripCall& x) {
  constexpr int S = 16;
  float t[kStripRows][S] = {};  // set at g = 0
  for (int64_t g = 0; g < x.groups; ++g) {
    const auto* bg = reinterpret_cast<const int8_t*>(x.b + x.group_off[g]);
    const int64_t rows = (x.group_off[g + 1] - x.group_off[g]) / S;
    for (int r = 0; r < x.rows; ++r) {
      const auto* a = reinterpret_cast<const int8_t*>(x.a + r * x.a_stride) + g * x.width;
      int32_t acc[S] = {};
      const uint32_t shift = x.gsum ? affine_shift(x, r, g) : 0;  // affine: the format's code
      for (int64_t kk = 0; kk < rows; ++kk)
        for (int j = 0; j < S; ++j) acc[j] += int32_t{a[kk]} * int32_t{bg[kk * S + j]};
      for (int j = 0; j < S; ++j) {
        float u = static_cast<float>(static_cast<int32_t>(static_cast<uint32_t>(acc[j]) + shift)) * x.scales[g * S + j];
        if (x.mins != nullptr) u = u + x.gsum_f[r * x.groups + g] * x.mins[g * S + j];
        t[r][j] = g == 0 ? u : t[r][j] + u;
      }
    }
  }
  for (int r = 0; r < x.rows; ++r)
    for (int j = 0; j < x.cols; ++j) x.c[r * x.ldc + j] = t[r][j] * x.sa[r];
}

}  // namespace ork::quant::detail
