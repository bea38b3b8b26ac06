// Synthetic weights and token inputs (synthetic.h).
#include "lib/exec/synthetic.h"

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

}  // namespace

std::vector<uint8_t> synthetic_weights(const ModelDesc& desc, int layer, int mi, uint64_t seed) {
  const MatmulDesc& md = desc.matmuls[static_cast<size_t>(mi)];
  std::vector<uint8_t> out;
  fill(desc.dtype, md.k * md.n, SplitMix{seed * 1000003u + static_cast<uint64_t>(layer) * 131u + static_cast<uint64_t>(mi)},
       out);
  return out;
}

Status write_synthetic(const std::string& path, const ModelDesc& desc, uint64_t seed,
                       const std::function<void(int64_t, int64_t)>& progress) {
  auto w = PackWriter::create(path, desc);
  if (!w) return w.error();
  const int64_t total = static_cast<int64_t>(desc.layers) * static_cast<int64_t>(desc.matmuls.size());
  int64_t done = 0;
  for (int l = 0; l < desc.layers; ++l) {
    for (size_t j = 0; j < desc.matmuls.size(); ++j) {
      const auto bytes = synthetic_weights(desc, l, static_cast<int>(j), seed);
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
