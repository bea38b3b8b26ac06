// ggml_accuracy: how close ork_qmatmul on imported ggml blocks is to ggml's own CPU dot
// product for the same blocks, both against a float64 dot product (docs/quantisation.md
// "ggml blocks", the figures there). Same weights for all three: random Gaussian W quantised
// to Q4_0 / Q4_1 / Q8_0 blocks by a plain quantiser here; "exact" is sum_k a[k] * w[k][n] in
// float64 over the blocks' dequantised values, so only the handling of the activations and
// the accumulation differ:
//   libork: A quantised to int8 with one scale per tensor or per row (round half to even),
//           exact int32 sums per block, fp32 dequantisation in the documented order;
//   ggml:   A quantised per block of 32 to Q8_0 (Q8_1 for Q4_1) as ggml's quantize_row_q8_0_ref
//           / _q8_1_ref do (d = amax / 127 stored as fp16, q = roundf(x / d) through 1/d, s =
//           fp16(d * sum q)), then the scalar ggml_vec_dot_q4_0_q8_0 / _q4_1_q8_1 / _q8_0_q8_0
//           arithmetic: sumf += sumi * (dx * dy)  (Q4_1: + mx * sy), in fp32.
// The ggml side is written from those published facts (github.com/ggml-org/ggml,
// src/ggml-quants.c, src/ggml-cpu/quants.c), not from its code.
//
// Usage: ggml_accuracy [--device NAME] [--m M] [--k K] [--n N] [--outliers] [--seed S]
// Exit 0 when every relative RMS error is below 0.05 (0.1 with --outliers); 1 otherwise;
// 2 on bad usage.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "ggml_test_util.h"
#include "driver/common/fp16.h"
#include "ork/ork.h"

namespace {

using ork::float_to_half;
using ork::half_to_float;

struct Args {
  std::string device = "cpu";
  int64_t m = 16, k = 1024, n = 256;
  bool outliers = false;
  uint32_t seed = 1;
};

void put16(uint8_t* p, float v) {
  const uint16_t h = float_to_half(v);
  p[0] = static_cast<uint8_t>(h);
  p[1] = static_cast<uint8_t>(h >> 8);
}

// A plain block quantiser for the weights (any quantiser will do: both sides use the blocks).
std::vector<uint8_t> quantise_blocks(int type, const std::vector<float>& w_nk, int64_t k, int64_t n) {
  const int64_t bb = ork::ggml_testing::block_bytes(type), per_row = k / 32;
  std::vector<uint8_t> out(static_cast<size_t>(n * per_row * bb), 0);
  for (int64_t r = 0; r < n; ++r)
    for (int64_t b = 0; b < per_row; ++b) {
      const float* x = w_nk.data() + r * k + b * 32;
      uint8_t* blk = out.data() + (r * per_row + b) * bb;
      float lo = x[0], hi = x[0], amax = 0, signed_max = 0;
      for (int j = 0; j < 32; ++j) {
        lo = std::min(lo, x[j]), hi = std::max(hi, x[j]);
        if (std::fabs(x[j]) > amax) amax = std::fabs(x[j]), signed_max = x[j];
      }
      if (type == ORK_GGML_Q8_0) {
        const float d = half_to_float(float_to_half(amax / 127.0f));
        put16(blk, d);
        for (int j = 0; j < 32; ++j) blk[2 + j] = static_cast<uint8_t>(static_cast<int8_t>(std::lround(d ? std::clamp(x[j] / d, -127.0f, 127.0f) : 0.0f)));
      } else if (type == ORK_GGML_Q4_0) {  // the signed extreme maps to code -8
        const float d = half_to_float(float_to_half(signed_max / -8.0f));
        put16(blk, d);
        for (int j = 0; j < 16; ++j) {
          auto code = [&](float v) { return static_cast<uint8_t>(d ? std::clamp(std::lround(v / d) + 8, 0L, 15L) : 8); };
          blk[2 + j] = static_cast<uint8_t>(code(x[j]) | (code(x[j + 16]) << 4));
        }
      } else {  // Q4_1: q * d + m over [lo, hi]
        const float d = half_to_float(float_to_half((hi - lo) / 15.0f)), m = half_to_float(float_to_half(lo));
        put16(blk, d);
        put16(blk + 2, m);
        for (int j = 0; j < 16; ++j) {
          auto code = [&](float v) { return static_cast<uint8_t>(d ? std::clamp(std::lround((v - m) / d), 0L, 15L) : 0); };
          blk[4 + j] = static_cast<uint8_t>(code(x[j]) | (code(x[j + 16]) << 4));
        }
      }
    }
  return out;
}

// ggml's CPU path for one row of A against decoded blocks (see the file comment).
std::vector<float> ggml_dot(int type, const std::vector<float>& a, int64_t m, int64_t k, int64_t n,
                            const ork::ggml_testing::Decoded& w) {
  std::vector<float> c(static_cast<size_t>(m * n));
  const int64_t blocks = k / 32;
  std::vector<int32_t> qa(static_cast<size_t>(k));
  std::vector<float> da(static_cast<size_t>(blocks)), sa(static_cast<size_t>(blocks));
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t b = 0; b < blocks; ++b) {  // quantize_row_q8_0_ref / _q8_1_ref
      const float* x = a.data() + i * k + b * 32;
      float amax = 0;
      for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[j]));
      const float d = amax / 127.0f, id = d ? 1.0f / d : 0.0f;
      int sum = 0;
      for (int j = 0; j < 32; ++j) sum += qa[static_cast<size_t>(b * 32 + j)] = static_cast<int32_t>(std::roundf(x[j] * id));
      da[static_cast<size_t>(b)] = half_to_float(float_to_half(d));
      sa[static_cast<size_t>(b)] = half_to_float(float_to_half(static_cast<float>(sum) * d));
    }
    for (int64_t col = 0; col < n; ++col) {
      float sumf = 0.0f;
      for (int64_t b = 0; b < blocks; ++b) {
        int32_t sumi = 0;  // Q4_1 / Q8 codes as stored: the nibble 0..15 or the int8
        for (int j = 0; j < 32; ++j) sumi += w.q[static_cast<size_t>((b * 32 + j) * n + col)] * qa[static_cast<size_t>(b * 32 + j)];
        const size_t g = static_cast<size_t>(b * n + col);
        if (type == ORK_GGML_Q4_1) sumf += (w.d[g] * da[static_cast<size_t>(b)]) * static_cast<float>(sumi) + w.m[g] * sa[static_cast<size_t>(b)];
        else sumf += static_cast<float>(sumi) * (w.d[g] * da[static_cast<size_t>(b)]);
      }
      c[static_cast<size_t>(i * n + col)] = sumf;
    }
  }
  return c;
}

double rel_rms(const std::vector<float>& c, const std::vector<double>& exact) {
  double num = 0, den = 0;
  for (size_t i = 0; i < c.size(); ++i) num += (c[i] - exact[i]) * (c[i] - exact[i]), den += exact[i] * exact[i];
  return std::sqrt(num / den);
}

bool parse(int argc, char** argv, Args* a) {
  for (int i = 1; i < argc; ++i) {
    const std::string s = argv[i];
    auto next = [&](const char* name) -> const char* {
      if (i + 1 >= argc) { std::fprintf(stderr, "%s needs a value\n", name); std::exit(2); }
      return argv[++i];
    };
    if (s == "--device") a->device = next("--device");
    else if (s == "--m") a->m = std::atoll(next("--m"));
    else if (s == "--k") a->k = std::atoll(next("--k"));
    else if (s == "--n") a->n = std::atoll(next("--n"));
    else if (s == "--seed") a->seed = static_cast<uint32_t>(std::atoll(next("--seed")));
    else if (s == "--outliers") a->outliers = true;
    else return false;
  }
  return a->m >= 1 && a->n >= 1 && a->k >= 32 && a->k % 32 == 0;
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  if (!parse(argc, argv, &args)) {
    std::fprintf(stderr, "usage: ggml_accuracy [--device NAME] [--m M] [--k K (multiple of 32)] [--n N] [--outliers] [--seed S]\n");
    return 2;
  }
  const int64_t m = args.m, k = args.k, n = args.n;
  std::mt19937 rng(args.seed);
  std::normal_distribution<float> g(0.0f, 1.0f);
  std::vector<float> w(static_cast<size_t>(n * k)), a(static_cast<size_t>(m * k));
  for (float& x : w) x = g(rng);
  for (float& x : a) x = g(rng);
  if (args.outliers)  // LLM-like activations: a few channels 20x larger
    for (int64_t i = 0; i < m; ++i)
      for (int64_t x = 0; x < k; x += 97) a[static_cast<size_t>(i * k + x)] *= 20.0f;
  ork_device* dev = nullptr;
  if (ork_device_open(args.device.c_str(), &dev) != ORK_OK) {
    std::fprintf(stderr, "ggml_accuracy: %s\n", ork_last_error());
    return 1;
  }
  const double bound = args.outliers ? 0.1 : 0.05;
  bool ok = true;
  std::printf("M=%lld K=%lld N=%lld device=%s seed=%u%s\n", static_cast<long long>(m), static_cast<long long>(k),
              static_cast<long long>(n), args.device.c_str(), args.seed, args.outliers ? " outliers" : "");
  std::printf("| format | libork a8 per-tensor | libork a8 per-row | ggml (Q8 per block of 32) |\n|---|---|---|---|\n");
  for (int type : {ORK_GGML_Q4_0, ORK_GGML_Q4_1, ORK_GGML_Q8_0}) {
    const auto blocks = quantise_blocks(type, w, k, n);
    const auto dec = ork::ggml_testing::decode(type, blocks, k, n);
    std::vector<double> exact(static_cast<size_t>(m * n), 0.0);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t col = 0; col < n; ++col) {
        double s = 0;
        for (int64_t x = 0; x < k; ++x) s += double(a[static_cast<size_t>(i * k + x)]) * dec.value(x, col, n);
        exact[static_cast<size_t>(i * n + col)] = s;
      }
    ork_qweights* q = nullptr;
    if (ork_qweights_import_ggml(dev, type, blocks.data(), blocks.size(), k, n, &q) != ORK_OK) {
      std::fprintf(stderr, "ggml_accuracy: %s\n", ork_last_error());
      return 1;
    }
    double err[2];
    for (int per_row = 0; per_row <= 1; ++per_row) {
      std::vector<float> c(static_cast<size_t>(m * n));
      ork_qmatmul_options o{sizeof(o), 8, per_row, 0};
      if (ork_qmatmul(dev, q, a.data(), m, c.data(), &o) != ORK_OK) {
        std::fprintf(stderr, "ggml_accuracy: %s\n", ork_last_error());
        return 1;
      }
      err[per_row] = rel_rms(c, exact);
    }
    const double eg = rel_rms(ggml_dot(type, a, m, k, n, dec), exact);
    std::printf("| %s | %.5f | %.5f | %.5f |\n", type == ORK_GGML_Q4_0 ? "Q4_0" : type == ORK_GGML_Q4_1 ? "Q4_1" : "Q8_0",
                err[0], err[1], eg);
    ok = ok && err[0] < bound && err[1] < bound && eg < bound;
    ork_qweights_destroy(q);
  }
  ork_device_close(dev);
  return ok ? 0 : 1;
}
