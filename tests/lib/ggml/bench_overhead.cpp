// The backend's host cost per MUL_MAT over the C API's own (docs/llama-cpp.md "Figures"): for
// each shape (K x N, M = 1), the same Q8_0 weights three ways, the calls interleaved in one run
// (each round runs the three in a rotating order): ork_matmul with int8 weights and an int8
// row; ork_qmatmul with 8-bit activations and one scale per row (what the backend calls) on
// the weights the backend's import makes (ggml's dequantised blocks requantised per row,
// lib/ggml/requant.cpp); and a one-node ggml graph computed by the ORK backend (the library
// named by GGML_BACKEND_PATH, found through ggml's registry). Prints min / median / max
// microseconds per call of each and the medians' differences: graph - ork_qmatmul is the
// backend's own work, graph - ork_matmul adds the C API's activation quantisation.
//
// Usage: bench_overhead [--calls N] [KxN ...]   (default 2000 calls each, Qwen2.5-1.5B's
// shapes 1536x1536 1536x256 1536x8960 8960x1536). ORK_DEVICE picks the device; under the
// LD_PRELOAD shim with ORK_EMU_SHIM_PC=zero-work (ORK_DEVICE=rknpu) the NPU does no work, so
// what is timed is host work alone. The graph's C must equal ork_qmatmul's (the same weights
// and call): checked once per shape, except on the zero-work PC, which computes nothing.
#include <ork/ork.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Shape {
  int64_t k, n;
};

struct Times {
  std::vector<double> us;
  double min() const { return us.front(); }
  double median() const { return us[us.size() / 2]; }
  double max() const { return us.back(); }
};

bool zero_work() {
  const char* v = std::getenv("ORK_EMU_SHIM_PC");
  return v != nullptr && std::strcmp(v, "zero-work") == 0;
}

// One shape's three callers and their operands.
struct Case {
  Shape s;
  ggml_context* ctx = nullptr;
  ggml_cgraph* graph = nullptr;
  ggml_tensor* c = nullptr;
  ggml_backend_buffer_t buf = nullptr;
  ork_weights* w8 = nullptr;
  ork_qweights* q = nullptr;
  std::vector<float> a, c_direct, c_graph;
  std::vector<int8_t> a8;
  std::vector<int32_t> c32;

  bool setup(ggml_backend_t backend, ork_device* od);
  void release();
};

// Q8_0 blocks of random K x N weights, set into the backend's buffer; the same blocks
// dequantised with ggml's own code and requantised by libork per row (the backend's import);
// random int8 weights of the shape for ork_matmul.
bool Case::setup(ggml_backend_t backend, ork_device* od) {
  const auto kn = static_cast<size_t>(s.k * s.n);
  ggml_init_params params = {ggml_tensor_overhead() * 8 + ggml_graph_overhead(), nullptr, true};
  ctx = ggml_init(params);
  ggml_tensor* w = ggml_new_tensor_2d(ctx, GGML_TYPE_Q8_0, s.k, s.n);
  ggml_tensor* x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, s.k, 1);
  c = ggml_mul_mat(ctx, w, x);
  graph = ggml_new_graph(ctx);
  ggml_build_forward_expand(graph, c);
  buf = ggml_backend_alloc_ctx_tensors(ctx, backend);
  std::vector<float> wf(kn);
  a.resize(static_cast<size_t>(s.k));
  for (float& v : wf) v = static_cast<float>(rand()) / RAND_MAX - 0.5f;
  for (float& v : a) v = static_cast<float>(rand()) / RAND_MAX - 0.5f;
  std::vector<uint8_t> blocks(ggml_row_size(GGML_TYPE_Q8_0, s.k) * static_cast<size_t>(s.n));
  ggml_quantize_chunk(GGML_TYPE_Q8_0, wf.data(), blocks.data(), 0, s.n, s.k, nullptr);
  ggml_backend_tensor_set(w, blocks.data(), 0, blocks.size());
  ggml_backend_tensor_set(x, a.data(), 0, a.size() * sizeof(float));
  // ggml's N rows of K -> K x N row-major, as the backend's import transposes them.
  std::vector<float> rows(kn), kxn(kn);
  ggml_get_type_traits(GGML_TYPE_Q8_0)->to_float(blocks.data(), rows.data(), static_cast<int64_t>(kn));
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t k = 0; k < s.k; ++k) kxn[static_cast<size_t>(k * s.n + n)] = rows[static_cast<size_t>(n * s.k + k)];
  ork_quant_options o{};
  o.struct_size = sizeof o;
  o.weight_bits = 8;
  o.group = 0;
  std::vector<int8_t> w8data(kn);
  for (int8_t& v : w8data) v = static_cast<int8_t>(rand() % 255 - 127);
  a8.resize(static_cast<size_t>(s.k));
  for (int8_t& v : a8) v = static_cast<int8_t>(rand() % 255 - 127);
  c_direct.resize(static_cast<size_t>(s.n));
  c_graph.resize(static_cast<size_t>(s.n));
  c32.resize(static_cast<size_t>(s.n));
  return buf != nullptr && ork_qweights_create(od, kxn.data(), s.k, s.n, &o, &q) == ORK_OK &&
         ork_weights_create(od, ORK_DTYPE_INT8, s.k, s.n, w8data.data(), &w8) == ORK_OK;
}

void Case::release() {
  ork_qweights_destroy(q);
  ork_weights_destroy(w8);
  if (buf) ggml_backend_buffer_free(buf);
  if (ctx) ggml_free(ctx);
}

template <typename F>
bool timed(F&& f, Times& t) {
  const auto t0 = Clock::now();
  if (!f()) return false;
  t.us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
  return true;
}

bool parse(int argc, char** argv, int* calls, std::vector<Shape>* shapes) {
  for (int i = 1; i < argc; ++i) {
    long long k = 0, n = 0;
    char tail = 0;
    if (std::strcmp(argv[i], "--calls") == 0 && i + 1 < argc) {
      *calls = std::atoi(argv[++i]);
    } else if (std::sscanf(argv[i], "%lldx%lld%c", &k, &n, &tail) == 2 && k > 0 && n > 0 && k % 32 == 0) {
      shapes->push_back({k, n});
    } else {
      std::fprintf(stderr, "bench_overhead: '%s': expected --calls N or KxN (K a multiple of 32)\n", argv[i]);
      return false;
    }
  }
  if (shapes->empty()) *shapes = {{1536, 1536}, {1536, 256}, {1536, 8960}, {8960, 1536}};
  if (*calls < 1) std::fprintf(stderr, "bench_overhead: --calls must be >= 1\n");
  return *calls >= 1;
}

void report(const char* what, const Times& t) {
  std::printf("  %-22s min %8.2f  median %8.2f  max %9.1f us\n", what, t.min(), t.median(), t.max());
}

// One shape: every caller warmed up, the graph's C checked against ork_qmatmul's, then
// `calls` rounds of the three in a rotating order.
bool run_case(ggml_backend_t backend, ork_device* od, Case& x, int calls) {
  ork_qmatmul_options qo{};
  qo.struct_size = sizeof qo;
  qo.activation_bits = 8;
  qo.per_row = 1;
  auto direct8 = [&] { return ork_matmul(od, x.w8, x.a8.data(), 1, x.c32.data(), nullptr) == ORK_OK; };
  auto direct = [&] { return ork_qmatmul(od, x.q, x.a.data(), 1, x.c_direct.data(), &qo) == ORK_OK; };
  auto via_ggml = [&] { return ggml_backend_graph_compute(backend, x.graph) == GGML_STATUS_SUCCESS; };
  if (!direct8() || !direct() || !via_ggml()) return false;  // first use: the graph imports its weights
  ggml_backend_tensor_get(x.c, x.c_graph.data(), 0, x.c_graph.size() * sizeof(float));
  const bool same = x.c_graph == x.c_direct;
  std::printf("Q8_0 weights K=%lld N=%lld, M=1, %d calls each; graph C %s ork_qmatmul's%s\n",
              static_cast<long long>(x.s.k), static_cast<long long>(x.s.n), calls, same ? "equals" : "differs from",
              zero_work() ? " (zero-work PC: not compared)" : "");
  if (!same && !zero_work()) return false;
  Times t8, tq, tg;
  for (int i = 0; i < calls; ++i) {
    bool ok = true;
    switch (i % 3) {
      case 0: ok = timed(direct8, t8) && timed(direct, tq) && timed(via_ggml, tg); break;
      case 1: ok = timed(direct, tq) && timed(via_ggml, tg) && timed(direct8, t8); break;
      default: ok = timed(via_ggml, tg) && timed(direct8, t8) && timed(direct, tq); break;
    }
    if (!ok) return false;
  }
  for (Times* t : {&t8, &tq, &tg}) std::sort(t->us.begin(), t->us.end());
  report("ork_matmul (int8)", t8);
  report("ork_qmatmul (per row)", tq);
  report("ggml graph on ORK", tg);
  std::printf("  median difference: graph - ork_qmatmul %.2f us, graph - ork_matmul %.2f us\n",
              tg.median() - tq.median(), tg.median() - t8.median());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  int calls = 2000;
  std::vector<Shape> shapes;
  if (!parse(argc, argv, &calls, &shapes)) return 2;
  ggml_backend_load_all();
  ggml_backend_dev_t dev = ggml_backend_dev_by_name("ORK");
  if (dev == nullptr) {
    std::fprintf(stderr, "bench_overhead: no ORK device (GGML_BACKEND_PATH?)\n");
    return 1;
  }
  ggml_backend_t backend = ggml_backend_dev_init(dev, nullptr);
  ork_device* od = nullptr;
  if (ork_device_open(nullptr, &od) != ORK_OK) {
    std::fprintf(stderr, "bench_overhead: %s\n", ork_last_error());
    return 1;
  }
  srand(1);
  bool ok = true;
  for (const Shape& s : shapes) {
    Case x{.s = s};
    ok = x.setup(backend, od) && run_case(backend, od, x, calls);
    x.release();
    if (!ok) {
      std::fprintf(stderr, "bench_overhead: K=%lld N=%lld failed: %s\n", static_cast<long long>(s.k),
                   static_cast<long long>(s.n), ork_last_error());
      break;
    }
  }
  ork_device_close(od);
  ggml_backend_free(backend);
  return ok ? 0 : 1;
}
