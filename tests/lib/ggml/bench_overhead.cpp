// The backend's host cost per MUL_MAT over the C API's own (docs/llama-cpp.md "Figures"):
// the same Q8_0 weights (K x N) and one activation row, side by side in one run, as
// ork_qmatmul on resident weights and as a one-node ggml graph computed by the ORK backend
// (the library named by GGML_BACKEND_PATH, found through ggml's registry). Prints min /
// median / max microseconds per call of each and the median difference.
//
// Usage: bench_overhead [K N ITERATIONS]    (default 1536 1536 200; ORK_DEVICE picks the device;
// run with ORK_GGML_EXACT=1, so that the backend imports the blocks as ork_qweights_import_ggml
// does here: the same weights on both sides)
#include <ork/ork.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml.h"

namespace {

using Clock = std::chrono::steady_clock;

template <typename F>
std::vector<double> time_us(int iterations, F&& f) {
  std::vector<double> t;
  for (int i = 0; i < iterations; ++i) {
    const auto t0 = Clock::now();
    if (!f()) return {};
    t.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t;
}

void report(const char* what, const std::vector<double>& t) {
  std::printf("%-28s min %9.1f  median %9.1f  max %9.1f us\n", what, t.front(), t[t.size() / 2], t.back());
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t k = argc > 1 ? std::atoll(argv[1]) : 1536, n = argc > 2 ? std::atoll(argv[2]) : 1536;
  const int iterations = argc > 3 ? std::atoi(argv[3]) : 200;
  ggml_backend_load_all();
  ggml_backend_dev_t dev = ggml_backend_dev_by_name("ORK");
  if (dev == nullptr || k % 32 != 0 || iterations < 1) {
    std::fprintf(stderr, "bench_overhead: no ORK device (GGML_BACKEND_PATH?) or bad K / iterations\n");
    return 1;
  }
  ggml_backend_t backend = ggml_backend_dev_init(dev, nullptr);
  ggml_init_params params = {ggml_tensor_overhead() * 8 + ggml_graph_overhead(), nullptr, true};
  ggml_context* ctx = ggml_init(params);
  ggml_tensor* w = ggml_new_tensor_2d(ctx, GGML_TYPE_Q8_0, k, n);
  ggml_tensor* a = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, k, 1);
  ggml_tensor* c = ggml_mul_mat(ctx, w, a);
  ggml_cgraph* graph = ggml_new_graph(ctx);
  ggml_build_forward_expand(graph, c);
  ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(ctx, backend);
  std::vector<float> wf(static_cast<size_t>(k * n)), af(static_cast<size_t>(k)), cf(static_cast<size_t>(n));
  srand(1);
  for (float& x : wf) x = static_cast<float>(rand()) / RAND_MAX - 0.5f;
  for (float& x : af) x = static_cast<float>(rand()) / RAND_MAX - 0.5f;
  std::vector<uint8_t> blocks(ggml_row_size(GGML_TYPE_Q8_0, k) * static_cast<size_t>(n));
  ggml_quantize_chunk(GGML_TYPE_Q8_0, wf.data(), blocks.data(), 0, n, k, nullptr);
  ggml_backend_tensor_set(w, blocks.data(), 0, blocks.size());
  ggml_backend_tensor_set(a, af.data(), 0, af.size() * sizeof(float));

  ork_device* od = nullptr;
  ork_qweights* q = nullptr;
  if (ork_device_open(nullptr, &od) != ORK_OK ||
      ork_qweights_import_ggml(od, ORK_GGML_Q8_0, blocks.data(), blocks.size(), k, n, &q) != ORK_OK) {
    std::fprintf(stderr, "bench_overhead: %s\n", ork_last_error());
    return 1;
  }
  ork_qmatmul_options o{};
  o.struct_size = sizeof o;
  o.activation_bits = 8;
  o.per_row = 1;
  auto direct = [&] { return ork_qmatmul(od, q, af.data(), 1, cf.data(), &o) == ORK_OK; };
  auto via_ggml = [&] { return ggml_backend_graph_compute(backend, graph) == GGML_STATUS_SUCCESS; };
  direct();
  via_ggml();  // first use: nothing imported here (the set above imported the weights only
               // if the buffer were a weights buffer), so warm both paths first
  const std::vector<double> td = time_us(iterations, direct), tg = time_us(iterations, via_ggml);
  if (td.empty() || tg.empty()) {
    std::fprintf(stderr, "bench_overhead: a call failed: %s\n", ork_last_error());
    return 1;
  }
  std::printf("Q8_0 weights K=%lld N=%lld, M=1, %d calls each\n", static_cast<long long>(k),
              static_cast<long long>(n), iterations);
  report("ork_qmatmul", td);
  report("ggml graph on ORK", tg);
  std::printf("median overhead: %.1f us per MUL_MAT\n", tg[tg.size() / 2] - td[td.size() / 2]);
  ork_qweights_destroy(q);
  ork_device_close(od);
  ggml_backend_buffer_free(buf);
  ggml_free(ctx);
  ggml_backend_free(backend);
  return 0;
}
