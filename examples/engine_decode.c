/* engine_decode: libork under the decode loop of a small synthetic transformer, the way an
 * inference engine wires it (docs/library.md "Engine integration").
 *
 *   engine_decode [DEVICE [TOKENS]]      DEVICE as ork_device_open (NULL: $ORK_DEVICE / auto)
 *
 * Three layers of q/k/v/o/gate/up/down int8 weights are made resident once. Two sequences
 * are decoded together (M = 2 rows), their activations living in ork_buffers of the device
 * from one call to the next; q, k and v are written into the columns of one concatenated
 * buffer (row_stride = its width, offset = the column start), gate and up likewise. The
 * parts between the matmuls (a toy attention, SiLU-free gating, residuals) are integer
 * arithmetic on the host. Every matmul output is compared, bit for bit, with a plain C
 * reference of the same model run alongside; exit 0 only when all match. At the end the
 * device's cumulative statistics (ork_device_get_stats) are printed.
 *
 * Only the public header is used: build with `cc engine_decode.c $(pkg-config --cflags
 * --libs ork)`.
 */
#include <ork/ork.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { LAYERS = 3, ROWS = 2, HIDDEN = 64, QDIM = 64, KVDIM = 32, FFN = 96 };
enum { QKV = QDIM + 2 * KVDIM, GU = 2 * FFN };

/* One layer's weights: K x N row-major int8, as ork_weights_create takes them. */
typedef struct layer {
  int8_t *q, *k, *v, *o, *gate, *up, *down;
  ork_weights *wq, *wk, *wv, *wo, *wgate, *wup, *wdown;
} layer;

static uint32_t lcg(uint32_t* s) {
  *s = *s * 1664525u + 1013904223u; /* Numerical Recipes */
  return *s >> 24;
}

static int8_t* random_matrix(int64_t k, int64_t n, uint32_t seed) {
  int8_t* m = malloc((size_t)(k * n));
  if (m == NULL) return NULL;
  for (int64_t i = 0; i < k * n; ++i) m[i] = (int8_t)((int)(lcg(&seed) % 15) - 7); /* -7..7 */
  return m;
}

static int8_t clamp8(int32_t v) { return (int8_t)(v < -127 ? -127 : v > 127 ? 127 : v); }

/* The plain C reference: C[r][n] = sum_k A[r][k] * W[k][n], C at a row stride. */
static void ref_matmul(const int8_t* a, const int8_t* w, int32_t* c, int64_t c_stride, int64_t k, int64_t n) {
  for (int64_t r = 0; r < ROWS; ++r)
    for (int64_t j = 0; j < n; ++j) {
      int32_t sum = 0;
      for (int64_t x = 0; x < k; ++x) sum += (int32_t)a[r * k + x] * (int32_t)w[x * n + j];
      c[r * c_stride + j] = sum;
    }
}

/* The host parts of a layer, shared by the device run and the reference (so that only the
 * matmuls can differ). attn = clamp(q/64 + k*v/4096) with k and v repeated over q's width;
 * act = clamp(relu(gate)/64 * up/64 / 64); residuals add the projections / 256. */
static void attention(const int32_t* qkv, int8_t* attn) {
  for (int r = 0; r < ROWS; ++r)
    for (int i = 0; i < QDIM; ++i) {
      const int32_t* row = qkv + r * QKV;
      const int32_t kv = (row[QDIM + i % KVDIM] / 64) * (row[QDIM + KVDIM + i % KVDIM] / 64);
      attn[r * QDIM + i] = clamp8(row[i] / 64 + kv / 1024);
    }
}

static void gating(const int32_t* gu, int8_t* act) {
  for (int r = 0; r < ROWS; ++r)
    for (int i = 0; i < FFN; ++i) {
      const int32_t g = gu[r * GU + i] > 0 ? gu[r * GU + i] / 64 : 0, u = gu[r * GU + FFN + i] / 64;
      act[r * FFN + i] = clamp8(g * u / 64);
    }
}

static void residual(int8_t* x, const int32_t* proj) {
  for (int i = 0; i < ROWS * HIDDEN; ++i) x[i] = clamp8(x[i] + proj[i] / 256);
}

static int failed(ork_status st, const char* what) {
  if (st == ORK_OK) return 0;
  fprintf(stderr, "engine_decode: %s: %s: %s\n", what, ork_status_string(st), ork_last_error());
  return 1;
}

static int same(const int32_t* got, const int32_t* want, size_t count, const char* what, int layer_index, int token) {
  for (size_t i = 0; i < count; ++i) {
    if (got[i] != want[i]) {
      fprintf(stderr, "engine_decode: token %d layer %d %s: cell %zu is %d, the reference %d\n", token, layer_index,
              what, i, got[i], want[i]);
      return 0;
    }
  }
  return 1;
}

/* The activations in device buffers, and their CPU mappings. */
typedef struct buffers {
  ork_buffer *x, *qkv, *attn, *o, *gu, *act, *down;
  int8_t *xp, *attnp, *actp;
  int32_t *qkvp, *op, *gup, *downp;
} buffers;

static int make_buffer(ork_device* dev, size_t bytes, ork_buffer** b, void** p) {
  if (failed(ork_buffer_create(dev, bytes, b), "ork_buffer_create")) return 1;
  return failed(ork_buffer_map(*b, p), "ork_buffer_map");
}

static int make_buffers(ork_device* dev, buffers* b) {
  memset(b, 0, sizeof(*b));
  return make_buffer(dev, ROWS * HIDDEN, &b->x, (void**)&b->xp) ||
         make_buffer(dev, ROWS * QKV * 4, &b->qkv, (void**)&b->qkvp) ||
         make_buffer(dev, ROWS * QDIM, &b->attn, (void**)&b->attnp) ||
         make_buffer(dev, ROWS * HIDDEN * 4, &b->o, (void**)&b->op) ||
         make_buffer(dev, ROWS * GU * 4, &b->gu, (void**)&b->gup) ||
         make_buffer(dev, ROWS * FFN, &b->act, (void**)&b->actp) ||
         make_buffer(dev, ROWS * HIDDEN * 4, &b->down, (void**)&b->downp);
}

static void free_buffers(buffers* b) {
  ork_buffer* all[] = {b->x, b->qkv, b->attn, b->o, b->gu, b->act, b->down};
  for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); ++i) ork_buffer_destroy(all[i]);
}

/* C = A x W with A and C in buffers, C at column `col` of a `width`-wide matrix. */
static ork_status mm(ork_device* dev, const ork_weights* w, ork_buffer* a, ork_buffer* c, int64_t col, int64_t width) {
  const ork_tensor at = {NULL, a, 0, 0};
  const ork_tensor ct = {NULL, c, (size_t)col * sizeof(int32_t), width};
  return ork_matmul_t(dev, w, &at, ROWS, &ct, NULL);
}

/* One layer on the device, then the same on the reference; every matmul output compared. */
static int run_layer(ork_device* dev, const layer* L, buffers* b, int8_t* rx, int li, int token) {
  int32_t qkv[ROWS * QKV], o[ROWS * HIDDEN], gu[ROWS * GU], down[ROWS * HIDDEN];
  int8_t attn[ROWS * QDIM], act[ROWS * FFN];
  if (failed(mm(dev, L->wq, b->x, b->qkv, 0, QKV), "q") || failed(mm(dev, L->wk, b->x, b->qkv, QDIM, QKV), "k") ||
      failed(mm(dev, L->wv, b->x, b->qkv, QDIM + KVDIM, QKV), "v"))
    return 1;
  ref_matmul(rx, L->q, qkv, QKV, HIDDEN, QDIM);
  ref_matmul(rx, L->k, qkv + QDIM, QKV, HIDDEN, KVDIM);
  ref_matmul(rx, L->v, qkv + QDIM + KVDIM, QKV, HIDDEN, KVDIM);
  if (!same(b->qkvp, qkv, ROWS * QKV, "q|k|v", li, token)) return 1;

  attention(b->qkvp, b->attnp);
  attention(qkv, attn);
  if (failed(mm(dev, L->wo, b->attn, b->o, 0, 0), "o")) return 1;
  ref_matmul(attn, L->o, o, HIDDEN, QDIM, HIDDEN);
  if (!same(b->op, o, ROWS * HIDDEN, "o", li, token)) return 1;
  residual(b->xp, b->op);
  residual(rx, o);

  if (failed(mm(dev, L->wgate, b->x, b->gu, 0, GU), "gate") || failed(mm(dev, L->wup, b->x, b->gu, FFN, GU), "up"))
    return 1;
  ref_matmul(rx, L->gate, gu, GU, HIDDEN, FFN);
  ref_matmul(rx, L->up, gu + FFN, GU, HIDDEN, FFN);
  if (!same(b->gup, gu, ROWS * GU, "gate|up", li, token)) return 1;
  gating(b->gup, b->actp);
  gating(gu, act);
  if (failed(mm(dev, L->wdown, b->act, b->down, 0, 0), "down")) return 1;
  ref_matmul(act, L->down, down, HIDDEN, FFN, HIDDEN);
  if (!same(b->downp, down, ROWS * HIDDEN, "down", li, token)) return 1;
  residual(b->xp, b->downp);
  residual(rx, down);
  return 0;
}

static int make_layer(ork_device* dev, layer* L, uint32_t seed) {
  const struct {
    int8_t** host;
    ork_weights** w;
    int64_t k, n;
  } m[] = {{&L->q, &L->wq, HIDDEN, QDIM},      {&L->k, &L->wk, HIDDEN, KVDIM},  {&L->v, &L->wv, HIDDEN, KVDIM},
           {&L->o, &L->wo, QDIM, HIDDEN},      {&L->gate, &L->wgate, HIDDEN, FFN}, {&L->up, &L->wup, HIDDEN, FFN},
           {&L->down, &L->wdown, FFN, HIDDEN}};
  for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); ++i) {
    *m[i].host = random_matrix(m[i].k, m[i].n, seed + (uint32_t)i);
    if (*m[i].host == NULL) return failed(ORK_E_NO_MEMORY, "weights");
    if (failed(ork_weights_create(dev, ORK_DTYPE_INT8, m[i].k, m[i].n, *m[i].host, m[i].w), "ork_weights_create"))
      return 1;
  }
  return 0;
}

static void free_layer(layer* L) {
  ork_weights* w[] = {L->wq, L->wk, L->wv, L->wo, L->wgate, L->wup, L->wdown};
  int8_t* h[] = {L->q, L->k, L->v, L->o, L->gate, L->up, L->down};
  for (int i = 0; i < 7; ++i) {
    ork_weights_destroy(w[i]);
    free(h[i]);
  }
}

int main(int argc, char** argv) {
  const char* name = argc > 1 ? argv[1] : NULL;
  const int tokens = argc > 2 ? atoi(argv[2]) : 4;
  if (tokens < 1) {
    fprintf(stderr, "usage: engine_decode [DEVICE [TOKENS >= 1]]\n");
    return 2;
  }
  ork_device* dev = NULL;
  if (failed(ork_device_open(name, &dev), "ork_device_open")) return 1;
  ork_device_info info;
  ork_device_get_info(dev, &info);
  layer layers[LAYERS];
  memset(layers, 0, sizeof(layers));
  buffers b;
  int bad = make_buffers(dev, &b);
  for (int l = 0; l < LAYERS && !bad; ++l) bad = make_layer(dev, &layers[l], 1000u * (uint32_t)(l + 1));

  int8_t rx[ROWS * HIDDEN]; /* the reference's activations */
  uint32_t seed = 42;
  for (int i = 0; i < ROWS * HIDDEN && !bad; ++i) rx[i] = b.xp[i] = (int8_t)((int)(lcg(&seed) % 31) - 15);
  long matmuls = 0;
  for (int t = 0; t < tokens && !bad; ++t) {
    for (int l = 0; l < LAYERS && !bad; ++l, matmuls += 7) bad = run_layer(dev, &layers[l], &b, rx, l, t);
    /* The next token's input: this token's output, already in the x buffer. */
    if (!bad && memcmp(b.xp, rx, sizeof(rx)) != 0) {
      fprintf(stderr, "engine_decode: token %d: hidden state differs from the reference\n", t);
      bad = 1;
    }
  }
  if (!bad)
    printf("engine_decode: %s (%s): %d tokens x %d layers x 7 matmuls = %ld, M = %d: every output bit-exact\n",
           info.backend, info.kernel_interface, tokens, LAYERS, matmuls, ROWS);
  /* The device's cumulative statistics (ork_stats): what an engine's profiler would read. */
  ork_stats st;
  memset(&st, 0, sizeof(st));
  st.struct_size = sizeof(st);
  if (!bad && !failed(ork_device_get_stats(dev, &st), "ork_device_get_stats")) {
    const double per = st.calls ? 1e-3 / (double)st.calls : 0.0;
    printf("engine_decode: stats: calls %llu, per call us: wall %.1f, pack %.1f, submit %.1f, device %.1f, "
           "unpack %.1f; context builds %llu, hits %llu\n",
           (unsigned long long)st.calls, (double)st.wall_ns * per, (double)st.pack_ns * per, (double)st.submit_ns * per,
           (double)st.device_ns * per, (double)st.unpack_ns * per, (unsigned long long)st.context_builds,
           (unsigned long long)st.context_hits);
    if (st.calls != (uint64_t)matmuls) {
      fprintf(stderr, "engine_decode: the device counted %llu calls, the loop made %ld\n", (unsigned long long)st.calls,
              matmuls);
      bad = 1;
    }
  }
  for (int l = 0; l < LAYERS; ++l) free_layer(&layers[l]);
  free_buffers(&b);
  ork_device_close(dev);
  return bad ? 1 : 0;
}
