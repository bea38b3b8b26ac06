// The activation rule (activation.h).
#include "lib/exec/activation.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "driver/common/fp16.h"
#include "driver/common/int4.h"

namespace ork::exec {
namespace {

struct Range {
  int32_t lo, hi;
};
Range range_of(matmul::DType dtype) { return dtype == matmul::DType::int4 ? Range{-8, 7} : Range{-128, 127}; }

}  // namespace

int32_t round_shift(int32_t c, int shift) {
  if (shift == 0) return c;
  const int64_t v = c;
  const int64_t q = v >> shift;  // floor (arithmetic shift)
  const int64_t r = v - (q << shift);
  const int64_t half = int64_t{1} << (shift - 1);
  const bool up = r > half || (r == half && (q & 1) != 0);
  return static_cast<int32_t>(q + (up ? 1 : 0));
}

void requantise(matmul::DType dtype, const void* c, int64_t rows, int64_t width, int shift, Activation& out) {
  out.rows = rows;
  out.width = width;
  const size_t count = static_cast<size_t>(rows * width);
  if (dtype == matmul::DType::fp16) {
    const float* f = static_cast<const float*>(c);
    out.f16.resize(count);
    out.i8.clear();
    for (size_t i = 0; i < count; ++i) out.f16[i] = ork::float_to_half(std::ldexp(f[i], -shift));
    return;
  }
  const Range r = range_of(dtype);
  const int32_t* v = static_cast<const int32_t*>(c);
  out.i8.resize(count);
  out.f16.clear();
  for (size_t i = 0; i < count; ++i)
    out.i8[i] = static_cast<int8_t>(std::clamp(round_shift(v[i], shift), r.lo, r.hi));
}

void combine(matmul::DType dtype, std::span<const Activation* const> sources, Activation& out) {
  const Activation& first = *sources[0];
  out = first;
  if (sources.size() == 1) return;
  const size_t count = static_cast<size_t>(first.rows * first.width);
  if (dtype == matmul::DType::fp16) {
    for (size_t s = 1; s < sources.size(); ++s)
      for (size_t i = 0; i < count; ++i)
        out.f16[i] = ork::float_to_half(ork::half_to_float(out.f16[i]) + ork::half_to_float(sources[s]->f16[i]));
    return;
  }
  const Range r = range_of(dtype);
  for (size_t s = 1; s < sources.size(); ++s)
    for (size_t i = 0; i < count; ++i)
      out.i8[i] = static_cast<int8_t>(std::clamp<int32_t>(out.i8[i] + sources[s]->i8[i], r.lo, r.hi));
}

std::vector<uint8_t> operand_bytes(matmul::DType dtype, const Activation& a) {
  const size_t count = static_cast<size_t>(a.rows * a.width);
  if (dtype == matmul::DType::fp16) {
    std::vector<uint8_t> b(count * 2);
    std::memcpy(b.data(), a.f16.data(), b.size());
    return b;
  }
  if (dtype == matmul::DType::int8) return {reinterpret_cast<const uint8_t*>(a.i8.data()),
                                            reinterpret_cast<const uint8_t*>(a.i8.data()) + count};
  std::vector<uint8_t> b((count + 1) / 2, 0);
  for (size_t i = 0; i < count; ++i) int4::put(b.data(), static_cast<int64_t>(i), a.i8[i]);
  return b;
}

uint64_t fingerprint(std::span<const uint8_t> bytes, uint64_t h) {
  for (uint8_t b : bytes) {
    h ^= b;
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace ork::exec
