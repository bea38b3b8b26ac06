// MUL_MAT and MUL_MAT_ID on libork: which ones run here, how a weight slice is imported, and the call.
// ggml's MUL_MAT: src0 (the weights) is [K, N, ne02, ne03], src1 (activations) [K, M, ne12,
// ne13], dst [N, M, ne12, ne13]; dst slice (i2, i3) = src1 slice (i2, i3) x src0 slice
// (i2 / (ne12 / ne02), i3 / (ne13 / ne03)) (ggml/include/ggml.h ggml_mul_mat: "A: k columns,
// n rows => [ne03, ne02, n, k]", ne12 and ne13 multiples of ne02 and ne03 to broadcast).
// Each weight slice is libork weights of K x N in ggml's N x K layout; each activation
// slice is gathered into M x K rows (any strides), and C is scattered back the same way.
// MUL_MAT_ID (mixture of experts) uses the same slices, one per expert, its rows grouped by
// expert from the ids tensor: one call per expert used. docs/llama-cpp.md "What runs on ORK".
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

// One row of `count` fp32 values of any element stride (bytes) into dense `out`.
void copy_row_in(const uint8_t* row, size_t stride, int64_t count, float* out) {
  if (stride == sizeof(float)) {
    std::memcpy(out, row, static_cast<size_t>(count) * sizeof(float));
  } else {
    for (int64_t i = 0; i < count; ++i) std::memcpy(out + i, row + i * stride, sizeof(float));
  }
}

void copy_row_out(const float* in, int64_t count, size_t stride, uint8_t* row) {
  if (stride == sizeof(float)) {
    std::memcpy(row, in, static_cast<size_t>(count) * sizeof(float));
  } else {
    for (int64_t i = 0; i < count; ++i) std::memcpy(row + i * stride, in + i, sizeof(float));
  }
}

// Activation slice (i2, i3) of src1 as M x K dense fp32 rows.
void gather(const ggml_tensor* src1, int64_t i2, int64_t i3, std::vector<float>& f32) {
  const int64_t k = src1->ne[0], m = src1->ne[1];
  f32.resize(static_cast<size_t>(k * m));
  const uint8_t* base = static_cast<const uint8_t*>(src1->data) + i2 * src1->nb[2] + i3 * src1->nb[3];
  for (int64_t r = 0; r < m; ++r) copy_row_in(base + r * src1->nb[1], src1->nb[0], k, f32.data() + r * k);
}

void scatter(const std::vector<float>& c, ggml_tensor* dst, int64_t i2, int64_t i3) {
  const int64_t n = dst->ne[0], m = dst->ne[1];
  uint8_t* base = static_cast<uint8_t*>(dst->data) + i2 * dst->nb[2] + i3 * dst->nb[3];
  for (int64_t r = 0; r < m; ++r) copy_row_out(c.data() + r * n, n, dst->nb[0], base + r * dst->nb[1]);
}

// C (M x N) = A (M x K dense fp32 rows) x the resident weights. For fp16 weights A is
// rounded to fp16 first (nearest even, what ggml's CPU backend does to src1 for F16 weights).
ork_status run_rows(Device& d, int cores, const Resident& r, const std::vector<float>& a32, int64_t m,
                    std::vector<float>& c) {
  ork_status s;
  if (r.w != nullptr) {
    std::vector<ggml_fp16_t> a16(a32.size());
    ggml_fp32_to_fp16_row(a32.data(), a16.data(), static_cast<int64_t>(a32.size()));
    ork_matmul_options o{};
    o.struct_size = sizeof o;
    o.cores = cores;
    s = ork_matmul(d.dev, r.w, a16.data(), m, c.data(), &o);
  } else {
    // 8-bit activations, one scale per row: a row's result does not depend on the others
    // (prompt and decode agree), and the error stays inside test-backend-ops' bound.
    ork_qmatmul_options o{};
    o.struct_size = sizeof o;
    o.activation_bits = 8;
    o.per_row = 1;
    o.cores = cores;
    s = ork_qmatmul(d.dev, r.q, a32.data(), m, c.data(), &o);
  }
  return s;
}

// One dst slice: C (M x N) = A (M x K) x the resident weights.
ork_status run_slice(Device& d, int cores, const Resident& r, const ggml_tensor* src1, ggml_tensor* dst,
                     int64_t i2, int64_t i3) {
  std::vector<float> a32, c(static_cast<size_t>(dst->ne[0] * dst->ne[1]));
  gather(src1, i2, i3, a32);
  const ork_status s = run_rows(d, cores, r, a32, src1->ne[1], c);
  if (s == ORK_OK) scatter(c, dst, i2, i3);
  return s;
}

// MUL_MAT_ID's rows, grouped by expert: (slot, token) pairs in token order.
struct ExpertRow {
  int64_t slot, token;
};

// Reads ids [n_used, n_tokens] (int32, any strides) into one list of rows per expert; an id
// outside 0..n_expert-1 fails naming it (ggml's CPU backend would assert).
bool group_by_expert(const ggml_tensor* node, int64_t n_expert, std::vector<std::vector<ExpertRow>>& rows) {
  const ggml_tensor* ids = node->src[2];
  rows.assign(static_cast<size_t>(n_expert), {});
  for (int64_t t = 0; t < ids->ne[1]; ++t) {
    for (int64_t slot = 0; slot < ids->ne[0]; ++slot) {
      int32_t e;
      std::memcpy(&e, static_cast<const uint8_t*>(ids->data) + slot * ids->nb[0] + t * ids->nb[1], sizeof e);
      if (e < 0 || e >= n_expert) {
        std::fprintf(stderr, "ggml-ork: MUL_MAT_ID %s: expert id %d at [%lld][%lld] is outside 0..%lld\n",
                     node->name, e, static_cast<long long>(t), static_cast<long long>(slot),
                     static_cast<long long>(n_expert - 1));
        return false;
      }
      rows[static_cast<size_t>(e)].push_back({slot, t});
    }
  }
  return true;
}

// One expert's rows: gathered from b (slot s reads b's row s mod ne11, ggml's broadcast),
// multiplied by that expert's weight slice, scattered to dst[:, slot, token].
ork_status run_expert(Device& d, int cores, const ggml_tensor* node, int64_t e, const std::vector<ExpertRow>& rows) {
  const ggml_tensor* as = node->src[0];
  const ggml_tensor* b = node->src[1];
  const int64_t k = as->ne[0], n = as->ne[1], m = static_cast<int64_t>(rows.size());
  const Resident* r = resident_weights(as->buffer, as->type, static_cast<const uint8_t*>(as->data) + e * as->nb[2], k, n);
  if (r == nullptr) return ORK_E_UNSUPPORTED;
  std::vector<float> a32(static_cast<size_t>(m * k)), c(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m; ++i) {
    const uint8_t* row = static_cast<const uint8_t*>(b->data) + (rows[static_cast<size_t>(i)].slot % b->ne[1]) * b->nb[1] +
                         rows[static_cast<size_t>(i)].token * b->nb[2];
    copy_row_in(row, b->nb[0], k, a32.data() + i * k);
  }
  const ork_status s = run_rows(d, cores, *r, a32, m, c);
  if (s != ORK_OK) return s;
  ggml_tensor* dst = const_cast<ggml_tensor*>(node);
  for (int64_t i = 0; i < m; ++i) {
    uint8_t* row = static_cast<uint8_t*>(dst->data) + rows[static_cast<size_t>(i)].slot * dst->nb[1] +
                   rows[static_cast<size_t>(i)].token * dst->nb[2];
    copy_row_out(c.data() + i * n, n, dst->nb[0], row);
  }
  return ORK_OK;
}

int cores_for(const Device& d, int n_threads) {
  return d.is_cpu && n_threads > 0 ? (n_threads < d.cores ? n_threads : d.cores) : 0;
}

}  // namespace

// MUL_MAT_ID (ggml/include/ggml.h ggml_mul_mat_id): as [K, N, n_expert] weights, b [K, ne11,
// n_tokens] F32, ids [n_used, n_tokens] I32 (ne11 divides n_used), dst [N, n_used, n_tokens]:
// dst[:, s, t] = expert ids[s, t] of `as` times b[:, s mod ne11, t]. Declined as MUL_MAT is.
bool supports_mul_mat_id(const ggml_tensor* op) {
  const ggml_tensor* as = op->src[0];
  const ggml_tensor* b = op->src[1];
  const ggml_tensor* ids = op->src[2];
  if (!weight_type_supported(as->type) || b->type != GGML_TYPE_F32 || ids == nullptr ||
      ids->type != GGML_TYPE_I32 || op->type != GGML_TYPE_F32) {
    return false;
  }
  if (as->nb[0] != ggml_type_size(as->type) || as->nb[1] != ggml_row_size(as->type, as->ne[0])) return false;
  if (as->ne[3] != 1 || b->ne[3] != 1 || b->ne[1] == 0 || ids->ne[0] % b->ne[1] != 0) return false;
  if (as->buffer != nullptr && !is_ork_buffer_type(as->buffer->buft)) return false;
  return b->nb[0] % sizeof(float) == 0 && op->nb[0] % sizeof(float) == 0;
}

ggml_status compute_mul_mat_id(Device& d, int n_threads, const ggml_tensor* node) {
  const ggml_tensor* as = node->src[0];
  if (as->buffer == nullptr || !is_ork_buffer_type(as->buffer->buft)) {
    std::fprintf(stderr, "ggml-ork: MUL_MAT_ID %s: weights %s are not in an ORK buffer\n", node->name, as->name);
    return GGML_STATUS_FAILED;
  }
  if (ggml_nelements(node) == 0) return GGML_STATUS_SUCCESS;
  std::vector<std::vector<ExpertRow>> rows;
  if (!group_by_expert(node, as->ne[2], rows)) return GGML_STATUS_FAILED;
  for (int64_t e = 0; e < as->ne[2]; ++e) {
    if (rows[static_cast<size_t>(e)].empty()) continue;
    const ork_status s = run_expert(d, cores_for(d, n_threads), node, e, rows[static_cast<size_t>(e)]);
    if (s != ORK_OK) {
      std::fprintf(stderr, "ggml-ork: MUL_MAT_ID %s (%s weights %s, expert %lld, %zu rows): %s\n", node->name,
                   ggml_type_name(as->type), as->name, static_cast<long long>(e), rows[static_cast<size_t>(e)].size(),
                   status_text(s));
      return GGML_STATUS_FAILED;
    }
  }
  stats().mul_mat_ran.fetch_add(1);
  return GGML_STATUS_SUCCESS;
}

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
  if (is_block_type(type) && !exact_blocks()) return import_requantised(dev, type, data, k, n, &out->q);
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
  const int cores = cores_for(d, n_threads);
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
