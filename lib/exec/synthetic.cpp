// Synthetic weights and token inputs (synthetic.h).
#include "lib/exec/synthetic.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "lib/exec/pack_file.h"
#include "driver/common/fp16.h"
#include "driver/common/int4.h"

namespace ork::exec {
namespace {

// splitmix64 (Steele, Lea, Flood, "Fast splittable pseudorandom number generators", 2014):
// fully specified, so every machine makes the same model.
struct SplitMix {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
};

uint16_t small_half(uint8_t r) {  // (r - 128) / 128: exact in binary16
  return ork::float_to_half(static_cast<float>(static_cast<int>(r) - 128) / 128.0f);
}

void fill(matmul::DType dtype, int64_t count, SplitMix rng, std::vector<uint8_t>& out) {
  if (dtype == matmul::DType::int8) {
    out.resize(static_cast<size_t>(count));
    for (size_t i = 0; i < out.size(); i += 8) {
      const uint64_t r = rng.next();
      for (size_t b = 0; b < 8 && i + b < out.size(); ++b) out[i + b] = static_cast<uint8_t>(r >> (8 * b));
    }
  } else if (dtype == matmul::DType::int4) {
    out.resize(static_cast<size_t>((count + 1) / 2));  // every nibble -8..7 is a code
    for (size_t i = 0; i < out.size(); i += 8) {
      const uint64_t r = rng.next();
      for (size_t b = 0; b < 8 && i + b < out.size(); ++b) out[i + b] = static_cast<uint8_t>(r >> (8 * b));
    }
    if (count % 2 != 0) out.back() &= 0x0f;
  } else {
    out.resize(static_cast<size_t>(count) * 2);
    auto* h = reinterpret_cast<uint16_t*>(out.data());
    for (int64_t i = 0; i < count; i += 8) {
      const uint64_t r = rng.next();
      for (int64_t b = 0; b < 8 && i + b < count; ++b) h[i + b] = small_half(static_cast<uint8_t>(r >> (8 * b)));
    }
  }
}

constexpr int64_t kQ4Block = 32;  // Q4_0: 32 values per scale

// A value of about N(0, 1), scaled: the sum of 12 uniform 16-bit integers, centred and
// doubled to stay whole (mean 0, sd 2 x sqrt(65536^2 - 1), about 131072).
int64_t normal_like(SplitMix& rng) {
  int64_t sum = 0;
  for (int i = 0; i < 3; ++i) {
    const uint64_t r = rng.next();
    for (int b = 0; b < 4; ++b) sum += static_cast<int64_t>((r >> (16 * b)) & 0xffff);
  }
  return 2 * sum - 12 * 65535;
}

int64_t floor_div(int64_t a, int64_t b) {  // b > 0
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}

// Q4_0's code of x in a block whose value of largest magnitude is v: min(7, floor(-8x / v + 1/2)),
// as the exact ratio (2 x -8x + v) / 2v.
int q4_0_code(int64_t x, int64_t v) {
  if (v == 0) return 0;
  int64_t num = -16 * x + v, den = 2 * v;
  if (den < 0) num = -num, den = -den;
  return static_cast<int>(std::clamp<int64_t>(floor_div(num, den), -8, 7));
}

}  // namespace

std::vector<uint8_t> q4_0_like_weights(int64_t k, int64_t n, uint64_t seed) {
  std::vector<uint8_t> out(static_cast<size_t>(int4::packed_bytes(k * n)), 0);
  SplitMix rng{seed};
  int64_t x[kQ4Block];
  for (int64_t col = 0; col < n; ++col) {
    for (int64_t k0 = 0; k0 < k; k0 += kQ4Block) {
      const int64_t count = std::min(kQ4Block, k - k0);
      int64_t v = 0;
      for (int64_t i = 0; i < count; ++i) {
        x[i] = normal_like(rng);
        if (std::abs(x[i]) > std::abs(v)) v = x[i];
      }
      for (int64_t i = 0; i < count; ++i) int4::put(out.data(), (k0 + i) * n + col, q4_0_code(x[i], v));
    }
  }
  return out;
}

std::vector<uint8_t> uniform_int4_weights(int64_t k, int64_t n, uint64_t seed) {
  std::vector<uint8_t> out;
  fill(matmul::DType::int4, k * n, SplitMix{seed}, out);
  return out;
}

uint64_t synthetic_seed(uint64_t seed, int layer, int mi) {
  return seed * 1000003u + static_cast<uint64_t>(layer) * 131u + static_cast<uint64_t>(mi);
}

void synthetic_weights_into(const ModelDesc& desc, int layer, int mi, uint64_t seed, std::vector<uint8_t>& out) {
  const MatmulDesc& md = desc.matmuls[static_cast<size_t>(mi)];
  const uint64_t s = synthetic_seed(seed, layer, mi);
  if (desc.dtype == matmul::DType::int4) out = q4_0_like_weights(md.k, md.n, s);
  else fill(desc.dtype, md.k * md.n, SplitMix{s}, out);  // writes every byte it resizes to
}

std::vector<uint8_t> synthetic_weights(const ModelDesc& desc, int layer, int mi, uint64_t seed) {
  std::vector<uint8_t> out;
  synthetic_weights_into(desc, layer, mi, seed, out);
  return out;
}

Status write_synthetic(const std::string& path, const ModelDesc& desc, uint64_t seed,
                       const std::function<void(int64_t, int64_t)>& progress) {
  auto w = PackWriter::create(path, desc);
  if (!w) return w.error();
  const int64_t total = static_cast<int64_t>(desc.layers) * static_cast<int64_t>(desc.matmuls.size());
  int64_t done = 0;
  std::vector<uint8_t> bytes;  // reused: each tensor's own block was a fresh mapping (lever 57)
  for (int l = 0; l < desc.layers; ++l) {
    for (size_t j = 0; j < desc.matmuls.size(); ++j) {
      synthetic_weights_into(desc, l, static_cast<int>(j), seed, bytes);
      if (auto s = w->add(l, static_cast<int>(j), bytes.data()); !s) return s;
      if (progress) progress(++done, total);
    }
  }
  return w->finish();
}

Activation token_input(const ModelDesc& desc, int64_t m, int64_t token) {
  Activation a;
  a.rows = m;
  a.width = desc.hidden;
  std::vector<uint8_t> raw;
  const int64_t count = m * desc.hidden;
  SplitMix rng{0x746f6b656eull + static_cast<uint64_t>(token) * 7919u};
  if (desc.dtype == matmul::DType::fp16) {
    fill(matmul::DType::fp16, count, rng, raw);
    a.f16.resize(static_cast<size_t>(count));
    std::memcpy(a.f16.data(), raw.data(), raw.size());
    return a;
  }
  fill(desc.dtype, count, rng, raw);
  a.i8.resize(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i)
    a.i8[static_cast<size_t>(i)] = desc.dtype == matmul::DType::int8 ? static_cast<int8_t>(raw[static_cast<size_t>(i)])
                                                                     : int4::value_at(raw.data(), i);
  return a;
}

}  // namespace ork::exec
