// The error of ORK's MUL_MAT against ggml's CPU backend, per weight type and shape, in
// test-backend-ops' measure (normalised mean squared error, sum (cpu - ork)^2 / sum cpu^2:
// ggml-org/llama.cpp:tests/test-backend-ops.cpp `nmse`, commit de3ff815) and against its
// MUL_MAT bound, 5e-4 (docs/llama-cpp.md "Numerics"). The same one-node graph runs on both
// backends: Q8_0, Q4_0 and Q4_1 weights quantised by ggml from random values, F32 activations.
// Weights are uniform in [-1, 1] (test-backend-ops' own) or N(0, 1/K) (the synthetic
// models'). Prints one line per case; exit 1 when a case exceeds the bound or fails.
//
// Usage: ggml_nmse [--bound B]   (GGML_BACKEND_PATH = the ORK backend; ORK_DEVICE picks the
// device; ORK_GGML_EXACT=1 measures the exact block path)
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <random>
#include <vector>

#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml.h"

namespace {

struct Case {
  ggml_type type;
  int64_t k, n, m;
  bool normal;  // N(0, 1/K) weights, else uniform [-1, 1]
};

// C = A x W on `backend` with W's blocks as given; nullopt-like empty vector on failure.
std::vector<float> run(ggml_backend_t backend, ggml_type type, int64_t k, int64_t n, int64_t m,
                       const std::vector<uint8_t>& blocks, const std::vector<float>& a) {
  ggml_init_params params = {ggml_tensor_overhead() * 8 + ggml_graph_overhead(), nullptr, true};
  ggml_context* ctx = ggml_init(params);
  ggml_tensor* w = ggml_new_tensor_2d(ctx, type, k, n);
  ggml_tensor* x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, k, m);
  ggml_tensor* c = ggml_mul_mat(ctx, w, x);
  ggml_cgraph* graph = ggml_new_graph(ctx);
  ggml_build_forward_expand(graph, c);
  ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(ctx, backend);
  std::vector<float> out;
  if (buf != nullptr) {
    ggml_backend_tensor_set(w, blocks.data(), 0, blocks.size());
    ggml_backend_tensor_set(x, a.data(), 0, a.size() * sizeof(float));
    if (ggml_backend_graph_compute(backend, graph) == GGML_STATUS_SUCCESS) {
      out.resize(static_cast<size_t>(n * m));
      ggml_backend_tensor_get(c, out.data(), 0, out.size() * sizeof(float));
    }
    ggml_backend_buffer_free(buf);
  }
  ggml_free(ctx);
  return out;
}

double nmse(const std::vector<float>& ref, const std::vector<float>& got) {
  double e = 0, r = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    e += (static_cast<double>(ref[i]) - got[i]) * (static_cast<double>(ref[i]) - got[i]);
    r += static_cast<double>(ref[i]) * ref[i];
  }
  return e / r;
}

}  // namespace

int main(int argc, char** argv) {
  const double bound = argc == 3 && std::strcmp(argv[1], "--bound") == 0 ? std::atof(argv[2]) : 5e-4;
  ggml_backend_load_all();
  ggml_backend_dev_t dev = ggml_backend_dev_by_name("ORK");
  if (dev == nullptr || ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU) == nullptr) {
    std::fprintf(stderr, "ggml_nmse: no ORK device (GGML_BACKEND_PATH?) or no CPU backend\n");
    return 1;
  }
  ggml_backend_t ork = ggml_backend_dev_init(dev, nullptr);
  ggml_backend_t cpu = ggml_backend_init_by_type(GGML_BACKEND_DEVICE_TYPE_CPU, nullptr);
  const Case cases[] = {
      {GGML_TYPE_Q8_0, 256, 256, 1, false},   {GGML_TYPE_Q8_0, 1536, 256, 8, false},
      {GGML_TYPE_Q8_0, 1536, 256, 1, true},   {GGML_TYPE_Q8_0, 8960, 64, 4, true},
      {GGML_TYPE_Q4_0, 256, 256, 1, false},   {GGML_TYPE_Q4_0, 1536, 256, 8, false},
      {GGML_TYPE_Q4_0, 1536, 256, 1, true},   {GGML_TYPE_Q4_0, 8960, 64, 4, true},
      {GGML_TYPE_Q4_1, 256, 256, 1, false},   {GGML_TYPE_Q4_1, 1536, 256, 8, true},
  };
  std::mt19937 rng(1);
  int bad = 0;
  for (const Case& c : cases) {
    std::vector<float> wf(static_cast<size_t>(c.k * c.n)), a(static_cast<size_t>(c.k * c.m));
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    std::normal_distribution<float> normal(0.0f, 1.0f / std::sqrt(static_cast<float>(c.k)));
    for (float& x : wf) x = c.normal ? normal(rng) : uniform(rng);
    for (float& x : a) x = uniform(rng);
    std::vector<uint8_t> blocks(ggml_row_size(c.type, c.k) * static_cast<size_t>(c.n));
    ggml_quantize_chunk(c.type, wf.data(), blocks.data(), 0, c.n, c.k, nullptr);
    const std::vector<float> want = run(cpu, c.type, c.k, c.n, c.m, blocks, a);
    const std::vector<float> got = run(ork, c.type, c.k, c.n, c.m, blocks, a);
    if (want.empty() || got.empty()) {
      std::printf("%s K=%lld N=%lld M=%lld: the graph failed\n", ggml_type_name(c.type), static_cast<long long>(c.k),
                  static_cast<long long>(c.n), static_cast<long long>(c.m));
      ++bad;
      continue;
    }
    const double e = nmse(want, got);
    const bool over = !(e <= bound);
    bad += over ? 1 : 0;
    std::printf("%-5s K=%-5lld N=%-4lld M=%lld %-7s NMSE %.3e%s\n", ggml_type_name(c.type), static_cast<long long>(c.k),
                static_cast<long long>(c.n), static_cast<long long>(c.m), c.normal ? "normal" : "uniform", e,
                over ? "  OVER THE BOUND" : "");
  }
  ggml_backend_free(cpu);
  ggml_backend_free(ork);
  std::printf("%s: %d of %zu cases over NMSE %.1e or failed\n", bad ? "FAIL" : "ok", bad, std::size(cases), bound);
  return bad ? 1 : 0;
}
