/* engine_decode: libork under the decode loop of a small synthetic transformer, the way an
 * inference engine wires it (docs/library.md "Engine integration").
 *
 *   engine_decode [DEVICE [TOKENS]]      DEVICE as ork_device_open (NULL: $ORK_DEVICE / auto)
 *
 * Three layers of q/k/v/o/gate/up/down int8 weights are made resident once: q/k/v and
 * gate/up as K x N, o and down as N x K (the nn.Linear / ggml layout an engine holds,
 * ork_weights_create_ex). The last layer's weights then go through an engine's weight
 * cache: exported as packed blobs, destroyed, and imported again with no repacking
 * (ork_weights_export_packed / ork_weights_import_packed). Two sequences are decoded
 * together (M = 2 rows), their activations living in ork_buffers of the device from one
 * call to the next. Each layer's q/k/v (into the columns of one concatenated buffer:
 * row_stride = its width, offset = the column start) and gate/up are one batch each,
 * recorded at the first token and replayed at every later one with the new activations
 * (ork_batch_*: one kernel job per batch, nothing planned or emitted again); o and down are
 * asynchronous jobs (ork_matmul_submit / ork_job_wait). While each job runs on the device
 * the program computes the same step of a plain C reference of the model, so host and
 * device work overlap. The parts between the matmuls (a toy attention, SiLU-free gating,
 * residuals) are integer arithmetic on the host. Every matmul output is compared, bit for
 * bit, with the reference; exit 0 only when all match. At the end the device's cumulative
 * statistics (ork_device_get_stats) are printed.
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

/* One layer's weights as the engine holds them (q, k, v, gate, up: K x N row-major; o and
 * down: N x K row-major), their device handles, and the layer's two batches. */
typedef struct layer {
  int8_t *q, *k, *v, *o, *gate, *up, *down;
  ork_weights *wq, *wk, *wv, *wo, *wgate, *wup, *wdown;
  ork_batch *qkv, *gu;
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

/* The plain C reference: C[r][n] = sum_k A[r][k] * W(k, n), C at a row stride; W(k, n) at
 * w[k * n_total + n] (K x N) or, with `nk`, at w[n * K + k] (N x K). */
static void ref_matmul(const int8_t* a, const int8_t* w, int32_t* c, int64_t c_stride, int64_t k, int64_t n, int nk) {
  for (int64_t r = 0; r < ROWS; ++r)
    for (int64_t j = 0; j < n; ++j) {
      int32_t sum = 0;
      for (int64_t x = 0; x < k; ++x) sum += (int32_t)a[r * k + x] * (int32_t)(nk ? w[j * k + x] : w[x * n + j]);
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

/* A and C as tensors of device buffers: C at column `col` of a `width`-wide matrix. */
static ork_tensor in_buffer(ork_buffer* b, int64_t col, int64_t width) {
  const ork_tensor t = {NULL, b, (size_t)col * sizeof(int32_t), width};
  return t;
}

/* A layer's two batches: q|k|v from x into the qkv buffer's columns, gate|up from x into
 * the gu buffer's. Recorded at their first submit; every later submit replays them. */
static int make_batches(ork_device* dev, layer* L, buffers* b) {
  const ork_tensor x = in_buffer(b->x, 0, 0);
  const ork_tensor q = in_buffer(b->qkv, 0, QKV), k = in_buffer(b->qkv, QDIM, QKV),
                   v = in_buffer(b->qkv, QDIM + KVDIM, QKV);
  const ork_tensor g = in_buffer(b->gu, 0, GU), u = in_buffer(b->gu, FFN, GU);
  return failed(ork_batch_create(dev, &L->qkv), "ork_batch_create") ||
         failed(ork_batch_add_matmul(L->qkv, L->wq, &x, ROWS, &q, NULL), "batch q") ||
         failed(ork_batch_add_matmul(L->qkv, L->wk, &x, ROWS, &k, NULL), "batch k") ||
         failed(ork_batch_add_matmul(L->qkv, L->wv, &x, ROWS, &v, NULL), "batch v") ||
         failed(ork_batch_create(dev, &L->gu), "ork_batch_create") ||
         failed(ork_batch_add_matmul(L->gu, L->wgate, &x, ROWS, &g, NULL), "batch gate") ||
         failed(ork_batch_add_matmul(L->gu, L->wup, &x, ROWS, &u, NULL), "batch up");
}

/* A job in flight: a batch submitted, or one matmul from buffer `a` into buffer `c`. */
static int submit_batch(ork_batch* batch, ork_job** job, const char* what) {
  return failed(ork_batch_submit(batch, job), what);
}

static int submit_one(ork_device* dev, const ork_weights* w, ork_buffer* a, ork_buffer* c, ork_job** job,
                      const char* what) {
  const ork_tensor at = in_buffer(a, 0, 0), ct = in_buffer(c, 0, 0);
  return failed(ork_matmul_submit(dev, w, &at, ROWS, &ct, NULL, job), what);
}

/* Waits for `job` (its C is written then) and frees it. */
static int finish(ork_job* job, const char* what) {
  const ork_status st = ork_job_wait(job, -1);
  ork_job_release(job);
  return failed(st, what);
}

/* One layer on the device; while each job runs, the same step on the reference (rx: its
 * activations); every matmul output compared once its job is done. */
static int run_layer(ork_device* dev, const layer* L, buffers* b, int8_t* rx, int li, int token) {
  int32_t qkv[ROWS * QKV], o[ROWS * HIDDEN], gu[ROWS * GU], down[ROWS * HIDDEN];
  int8_t attn[ROWS * QDIM], act[ROWS * FFN];
  ork_job* job = NULL;
  if (submit_batch(L->qkv, &job, "q|k|v batch")) return 1;
  ref_matmul(rx, L->q, qkv, QKV, HIDDEN, QDIM, 0);
  ref_matmul(rx, L->k, qkv + QDIM, QKV, HIDDEN, KVDIM, 0);
  ref_matmul(rx, L->v, qkv + QDIM + KVDIM, QKV, HIDDEN, KVDIM, 0);
  if (finish(job, "q|k|v batch") || !same(b->qkvp, qkv, ROWS * QKV, "q|k|v", li, token)) return 1;

  attention(b->qkvp, b->attnp);
  if (submit_one(dev, L->wo, b->attn, b->o, &job, "o")) return 1;
  attention(qkv, attn);
  ref_matmul(attn, L->o, o, HIDDEN, QDIM, HIDDEN, 1);
  if (finish(job, "o") || !same(b->op, o, ROWS * HIDDEN, "o", li, token)) return 1;
  residual(b->xp, b->op);
  residual(rx, o);

  if (submit_batch(L->gu, &job, "gate|up batch")) return 1;
  ref_matmul(rx, L->gate, gu, GU, HIDDEN, FFN, 0);
  ref_matmul(rx, L->up, gu + FFN, GU, HIDDEN, FFN, 0);
  if (finish(job, "gate|up batch") || !same(b->gup, gu, ROWS * GU, "gate|up", li, token)) return 1;
  gating(b->gup, b->actp);
  if (submit_one(dev, L->wdown, b->act, b->down, &job, "down")) return 1;
  gating(gu, act);
  ref_matmul(act, L->down, down, HIDDEN, FFN, HIDDEN, 1);
  if (finish(job, "down") || !same(b->downp, down, ROWS * HIDDEN, "down", li, token)) return 1;
  residual(b->xp, b->downp);
  residual(rx, down);
  return 0;
}

static int make_layer(ork_device* dev, layer* L, uint32_t seed) {
  const struct {
    int8_t** host;
    ork_weights** w;
    int64_t k, n;
    int32_t layout;
  } m[] = {{&L->q, &L->wq, HIDDEN, QDIM, ORK_LAYOUT_K_BY_N},   {&L->k, &L->wk, HIDDEN, KVDIM, ORK_LAYOUT_K_BY_N},
           {&L->v, &L->wv, HIDDEN, KVDIM, ORK_LAYOUT_K_BY_N},   {&L->o, &L->wo, QDIM, HIDDEN, ORK_LAYOUT_N_BY_K},
           {&L->gate, &L->wgate, HIDDEN, FFN, ORK_LAYOUT_K_BY_N}, {&L->up, &L->wup, HIDDEN, FFN, ORK_LAYOUT_K_BY_N},
           {&L->down, &L->wdown, FFN, HIDDEN, ORK_LAYOUT_N_BY_K}};
  for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); ++i) {
    *m[i].host = random_matrix(m[i].k, m[i].n, seed + (uint32_t)i);
    if (*m[i].host == NULL) return failed(ORK_E_NO_MEMORY, "weights");
    ork_weights_desc d;
    memset(&d, 0, sizeof(d));
    d.struct_size = sizeof(d);
    d.dtype = ORK_DTYPE_INT8;
    d.k = m[i].k;
    d.n = m[i].n;
    d.layout = m[i].layout;
    d.data = *m[i].host;
    if (failed(ork_weights_create_ex(dev, &d, m[i].w), "ork_weights_create_ex")) return 1;
  }
  return 0;
}

/* An engine's weight cache: the NPU-native packed bytes of each weight exported (as they
 * would be written to disk), the weights destroyed, then made resident again from the
 * bytes with no repacking. */
static int cache_round_trip(ork_device* dev, layer* L) {
  ork_weights** all[] = {&L->wq, &L->wk, &L->wv, &L->wo, &L->wgate, &L->wup, &L->wdown};
  for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); ++i) {
    size_t size = 0;
    if (failed(ork_weights_export_packed(*all[i], NULL, 0, &size), "ork_weights_export_packed (size)")) return 1;
    void* blob = malloc(size);
    if (blob == NULL) return failed(ORK_E_NO_MEMORY, "blob");
    int bad = failed(ork_weights_export_packed(*all[i], blob, size, &size), "ork_weights_export_packed");
    ork_weights_destroy(*all[i]);
    *all[i] = NULL;
    if (!bad) bad = failed(ork_weights_import_packed(dev, blob, size, all[i]), "ork_weights_import_packed");
    free(blob);
    if (bad) return 1;
  }
  return 0;
}

static void free_layer(layer* L) {
  ork_batch_destroy(L->qkv); /* first: a batch holds its weights' use and its buffers */
  ork_batch_destroy(L->gu);
  ork_weights* w[] = {L->wq, L->wk, L->wv, L->wo, L->wgate, L->wup, L->wdown};
  int8_t* h[] = {L->q, L->k, L->v, L->o, L->gate, L->up, L->down};
  for (int i = 0; i < 7; ++i) {
    ork_weights_destroy(w[i]);
    free(h[i]);
  }
}

/* The decode loop: `tokens` tokens through every layer, the next token's input this
 * token's output, already in the x buffer. Returns the matmuls run, or -1 on a failure. */
static long decode(ork_device* dev, layer* layers, buffers* b, int tokens) {
  int8_t rx[ROWS * HIDDEN]; /* the reference's activations */
  uint32_t seed = 42;
  for (int i = 0; i < ROWS * HIDDEN; ++i) rx[i] = b->xp[i] = (int8_t)((int)(lcg(&seed) % 31) - 15);
  long matmuls = 0;
  for (int t = 0; t < tokens; ++t) {
    for (int l = 0; l < LAYERS; ++l, matmuls += 7)
      if (run_layer(dev, &layers[l], b, rx, l, t)) return -1;
    if (memcmp(b->xp, rx, sizeof(rx)) != 0) {
      fprintf(stderr, "engine_decode: token %d: hidden state differs from the reference\n", t);
      return -1;
    }
  }
  return matmuls;
}

/* The device's cumulative statistics (ork_stats), what an engine's profiler would read,
 * printed and checked against the loop: every matmul counted, on an NPU every matmul's
 * plan and command lists built once, at the first token (a batch's at its recording); the
 * cpu backend builds none. Returns 1 when they disagree. */
static int report_stats(ork_device* dev, const ork_device_info* info, long matmuls) {
  ork_stats st;
  memset(&st, 0, sizeof(st));
  st.struct_size = sizeof(st);
  if (failed(ork_device_get_stats(dev, &st), "ork_device_get_stats")) return 1;
  const double per = st.calls ? 1e-3 / (double)st.calls : 0.0;
  printf("engine_decode: stats: calls %llu, per call us: wall %.1f, pack %.1f, submit %.1f, device %.1f, "
         "unpack %.1f; context builds %llu, hits %llu\n",
         (unsigned long long)st.calls, (double)st.wall_ns * per, (double)st.pack_ns * per, (double)st.submit_ns * per,
         (double)st.device_ns * per, (double)st.unpack_ns * per, (unsigned long long)st.context_builds,
         (unsigned long long)st.context_hits);
  if (st.calls != (uint64_t)matmuls) {
    fprintf(stderr, "engine_decode: the device counted %llu calls, the loop made %ld\n", (unsigned long long)st.calls,
            matmuls);
    return 1;
  }
  const uint64_t builds = strcmp(info->backend, "cpu") == 0 ? 0 : LAYERS * 7;
  if (st.context_builds != builds) {
    fprintf(stderr, "engine_decode: %llu context builds, expected %llu (once per matmul)\n",
            (unsigned long long)st.context_builds, (unsigned long long)builds);
    return 1;
  }
  return 0;
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
  if (!bad) bad = cache_round_trip(dev, &layers[LAYERS - 1]);
  for (int l = 0; l < LAYERS && !bad; ++l) bad = make_batches(dev, &layers[l], &b);
  const long matmuls = bad ? -1 : decode(dev, layers, &b, tokens);
  if (matmuls >= 0) {
    printf("engine_decode: %s (%s): %d tokens x %d layers x 7 matmuls = %ld, M = %d (q|k|v and gate|up as "
           "replayed batches, o and down as async jobs, layer %d's weights from packed blobs): every output "
           "bit-exact\n",
           info.backend, info.kernel_interface, tokens, LAYERS, matmuls, ROWS, LAYERS - 1);
    bad = report_stats(dev, &info, matmuls);
  } else {
    bad = 1;
  }
  for (int l = 0; l < LAYERS; ++l) free_layer(&layers[l]);
  free_buffers(&b);
  ork_device_close(dev);
  return bad ? 1 : 0;
}
