// MUL_MAT on libork: which ones run here, how a weight slice is imported, and the call.
// ggml's MUL_MAT: src0 (the weights) is [K, N, ne02, ne03], src1 (activations) [K, M, ne12,
// ne13], dst [N, M, ne12, ne13]; dst slice (i2, i3) = src1 slice (i2, i3) x src0 slice
// (i2 / (ne12 / ne02), i3 / (ne13 / ne03)) (ggml/include/ggml.h ggml_mul_mat: "A: k columns,
// n rows => [ne03, ne02, n, k]", ne12 and ne13 multiples of ne02 and ne03 to broadcast).
// Each weight slice is libork weights of K x N in ggml's N x K layout; each activation
// slice is gathered into M x K rows (any strides), and C is scattered back the same way.
// docs/llama-cpp.md "What runs on ORK".
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "ork_ggml.h"

namespace ork_ggml {
namespace {

// ggml type numbers of the block formats are the C API's (include/ork/ork.h ORK_GGML_*).
static_assert(GGML_TYPE_Q4_0 == ORK_GGML_Q4_0 && GGML_TYPE_Q4_1 == ORK_GGML_Q4_1 &&
              GGML_TYPE_Q8_0 == ORK_GGML_Q8_0);

bool is_block_type(ggml_type t) {
  return t == GGML_TYPE_Q8_0 || t == GGML_TYPE_Q4_0 || t == GGML_TYPE_Q4_1;
}

// fp16 weights in ggml's row order: n rows of k halves, an N x K matrix.
ork_status create_fp16(ork_device* dev, const void* halves, int64_t k, int64_t n, ork_weights** out) {
  ork_weights_desc desc{};
  desc.struct_size = sizeof desc;
  desc.dtype = ORK_DTYPE_FP16;
  desc.k = k;
  desc.n = n;
  desc.layout = ORK_LAYOUT_N_BY_K;
  desc.data = halves;
  return ork_weights_create_ex(dev, &desc, out);
}

// BF16 weights run as fp16: every bf16 value with |x| <= 65504 converts exactly unless it is
// below fp16's normal range (2^-14), where it rounds to an fp16 subnormal. A value past
// 65504 is refused at import, naming it, rather than turned into inf.
ork_status import_bf16(ork_device* dev, const void* data, int64_t k, int64_t n, ork_weights** out) {
  const size_t count = static_cast<size_t>(k) * static_cast<size_t>(n);
  std::vector<float> f(count);
  ggml_bf16_to_fp32_row(static_cast<const ggml_bf16_t*>(data), f.data(), static_cast<int64_t>(count));
  for (size_t i = 0; i < count; ++i) {
    if (!(std::fabs(f[i]) <= 65504.0f)) {
      std::fprintf(stderr, "ggml-ork: BF16 weight [%zu][%zu] = %g is outside fp16's range\n",
                   i / static_cast<size_t>(k), i % static_cast<size_t>(k), f[i]);
      return ORK_E_UNSUPPORTED;
    }
  }
  std::vector<ggml_fp16_t> h(count);
  ggml_fp32_to_fp16_row(f.data(), h.data(), static_cast<int64_t>(count));
  return create_fp16(dev, h.data(), k, n, out);
}

const char* status_text(ork_status s) { return s == ORK_OK ? "" : ork_last_error(); }

// Activation slice (i2, i3) of src1 as M x K rows: fp32, or fp16 for fp16 weights (round to
// nearest even, what ggml's CPU backend does to src1 for F16 weights).
void gather(const ggml_tensor* src1, int64_t i2, int64_t i3, bool fp16, std::vector<float>& f32,
            std::vector<ggml_fp16_t>& f16) {
  const int64_t k = src1->ne[0], m = src1->ne[1];
  f32.resize(static_cast<size_t>(k * m));
  const uint8_t* base = static_cast<const uint8_t*>(src1->data) + i2 * src1->nb[2] + i3 * src1->nb[3];
  for (int64_t r = 0; r < m; ++r) {
    const uint8_t* row = base + r * src1->nb[1];
    float* out = f32.data() + r * k;
    if (src1->nb[0] == sizeof(float)) {
      std::memcpy(out, row, static_cast<size_t>(k) * sizeof(float));
    } else {
      for (int64_t i = 0; i < k; ++i) std::memcpy(out + i, row + i * src1->nb[0], sizeof(float));
    }
  }
  if (fp16) {
    f16.resize(f32.size());
    ggml_fp32_to_fp16_row(f32.data(), f16.data(), static_cast<int64_t>(f32.size()));
  }
}

void scatter(const std::vector<float>& c, ggml_tensor* dst, int64_t i2, int64_t i3) {
  const int64_t n = dst->ne[0], m = dst->ne[1];
  uint8_t* base = static_cast<uint8_t*>(dst->data) + i2 * dst->nb[2] + i3 * dst->nb[3];
  for (int64_t r = 0; r < m; ++r) {
    uint8_t* row = base + r * dst->nb[1];
    const float* in = c.data() + r * n;
    if (dst->nb[0] == sizeof(float)) {
      std::memcpy(row, in, static_cast<size_t>(n) * sizeof(float));
    } else {
      for (int64_t i = 0; i < n; ++i) std::memcpy(row + i * dst->nb[0], in + i, sizeof(float));
    }
  }
}

// One dst slice: C (M x N) = A (M x K) x the resident weights.
ork_status run_slice(Device& d, int cores, const Resident& r, const ggml_tensor* src1, ggml_tensor* dst,
                     int64_t i2, int64_t i3) {
  std::vector<float> a32, c(static_cast<size_t>(dst->ne[0] * dst->ne[1]));
  std::vector<ggml_fp16_t> a16;
  gather(src1, i2, i3, r.w != nullptr, a32, a16);
  ork_status s;
  if (r.w != nullptr) {
    ork_matmul_options o{};
    o.struct_size = sizeof o;
    o.cores = cores;
    s = ork_matmul(d.dev, r.w, a16.data(), src1->ne[1], c.data(), &o);
  } else {
    // 8-bit activations, one scale per row: a row's result does not depend on the others
    // (prompt and decode agree), and the error stays inside test-backend-ops' bound.
    ork_qmatmul_options o{};
    o.struct_size = sizeof o;
    o.activation_bits = 8;
    o.per_row = 1;
    o.cores = cores;
    s = ork_qmatmul(d.dev, r.q, a32.data(), src1->ne[1], c.data(), &o);
  }
  if (s == ORK_OK) scatter(c, dst, i2, i3);
  return s;
}

}  // namespace

bool weight_type_supported(ggml_type type) {
  return type == GGML_TYPE_F16 || type == GGML_TYPE_BF16 || is_block_type(type);
}

// What the NPU path cannot take is declined here, so ggml computes it on the CPU: weights of
// another type, activations or outputs not F32, weight slices whose rows are not dense (the
// import reads a slice as N rows of K), weights outside an ORK buffer (the KV cache's
// attention products: importing per call would cost more than it saves).
bool supports_mul_mat(const ggml_tensor* op) {
  const ggml_tensor* w = op->src[0];
  const ggml_tensor* a = op->src[1];
  if (!weight_type_supported(w->type) || a->type != GGML_TYPE_F32 || op->type != GGML_TYPE_F32) {
    return false;
  }
  if (w->nb[0] != ggml_type_size(w->type) || w->nb[1] != ggml_row_size(w->type, w->ne[0])) return false;
  if (w->ne[2] == 0 || w->ne[3] == 0 || a->ne[2] % w->ne[2] != 0 || a->ne[3] % w->ne[3] != 0) return false;
  if (w->buffer != nullptr && !is_ork_buffer_type(w->buffer->buft)) return false;
  return a->nb[0] % sizeof(float) == 0 && op->nb[0] % sizeof(float) == 0;
}

ork_status import_slice(ork_device* dev, ggml_type type, const void* data, int64_t k, int64_t n,
                        Resident* out) {
  if (is_block_type(type)) {
    return ork_qweights_import_ggml(dev, static_cast<int32_t>(type), data,
                                    ggml_row_size(type, k) * static_cast<size_t>(n), k, n, &out->q);
  }
  if (type == GGML_TYPE_BF16) return import_bf16(dev, data, k, n, &out->w);
  return create_fp16(dev, data, k, n, &out->w);
}

ggml_status compute_mul_mat(Device& d, int n_threads, const ggml_tensor* node) {
  const ggml_tensor* w = node->src[0];
  const ggml_tensor* a = node->src[1];
  ggml_tensor* dst = const_cast<ggml_tensor*>(node);
  const int cores = d.is_cpu && n_threads > 0 ? (n_threads < d.cores ? n_threads : d.cores) : 0;
  if (w->buffer == nullptr || !is_ork_buffer_type(w->buffer->buft)) {
    std::fprintf(stderr, "ggml-ork: MUL_MAT %s: weights %s are not in an ORK buffer\n", node->name, w->name);
    return GGML_STATUS_FAILED;
  }
  if (ggml_nelements(node) == 0) return GGML_STATUS_SUCCESS;
  const int64_t r2 = a->ne[2] / w->ne[2], r3 = a->ne[3] / w->ne[3];
  for (int64_t i3 = 0; i3 < a->ne[3]; ++i3) {
    for (int64_t i2 = 0; i2 < a->ne[2]; ++i2) {
      const uint8_t* slice = static_cast<const uint8_t*>(w->data) + (i2 / r2) * w->nb[2] + (i3 / r3) * w->nb[3];
      const Resident* r = resident_weights(w->buffer, w->type, slice, w->ne[0], w->ne[1]);
      const ork_status s = r == nullptr ? ORK_E_UNSUPPORTED : run_slice(d, cores, *r, a, dst, i2, i3);
      if (s != ORK_OK) {
        std::fprintf(stderr, "ggml-ork: MUL_MAT %s (%s weights %s, M = %lld): %s\n", node->name,
                     ggml_type_name(w->type), w->name, static_cast<long long>(a->ne[1]), status_text(s));
        return GGML_STATUS_FAILED;
      }
    }
  }
  stats().mul_mat_ran.fetch_add(1);
  return GGML_STATUS_SUCCESS;
}

}  // namespace ork_ggml
