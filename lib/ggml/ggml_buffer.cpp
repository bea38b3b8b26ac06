// The ORK buffer type: host memory holding the tensors as ggml lays them out (so ggml's own
// code and the CPU backend read them as they are: is_host), plus the resident NPU copies of
// the weight slices in it. A buffer llama.cpp marks as weights imports every weight tensor
// when it is written in full (the model load); any other import happens at the first MUL_MAT
// that uses the slice. A write over a slice's bytes drops its resident copy. docs/llama-cpp.md
// "Buffer type and weight import".
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include "ork_ggml.h"

namespace ork_ggml {
namespace {

constexpr size_t kAlignment = 64;  // one cache line; ggml's CPU backend asks for 32 bytes

struct Slice {
  ggml_type type;
  int64_t k, n;
  size_t bytes;
  Resident r;
};

struct Buffer {
  Device* device;
  uint8_t* base;
  size_t size;
  std::mutex mu;                        // the slices; llama.cpp may load from several threads
  std::map<uintptr_t, Slice> slices;    // by start address

  void drop(Slice& s) {
    ork_weights_destroy(s.r.w);
    ork_qweights_destroy(s.r.q);
  }
  // Drops every resident slice overlapping [p, p + len).
  void invalidate(const void* p, size_t len) {
    const uintptr_t lo = reinterpret_cast<uintptr_t>(p), hi = lo + len;
    std::lock_guard<std::mutex> lock(mu);
    for (auto it = slices.begin(); it != slices.end();) {
      if (it->first < hi && lo < it->first + it->second.bytes) {
        drop(it->second);
        it = slices.erase(it);
      } else {
        ++it;
      }
    }
  }
  const Resident* find_or_import(ggml_type type, const void* data, int64_t k, int64_t n) {
    const uintptr_t at = reinterpret_cast<uintptr_t>(data);
    std::lock_guard<std::mutex> lock(mu);
    auto it = slices.find(at);
    if (it != slices.end() && it->second.type == type && it->second.k == k && it->second.n == n) {
      return &it->second.r;
    }
    if (it != slices.end()) {  // the same bytes seen as another tensor: import again
      drop(it->second);
      slices.erase(it);
    }
    Slice s{type, k, n, ggml_row_size(type, k) * static_cast<size_t>(n), {}};
    if (import_slice(device->dev, type, data, k, n, &s.r) != ORK_OK) return nullptr;
    stats().weights_imported.fetch_add(1);
    return &slices.emplace(at, s).first->second.r;
  }
};

Buffer* ctx(ggml_backend_buffer_t b) { return static_cast<Buffer*>(b->context); }

// A weight tensor written in full into a weights buffer is imported now, slice by slice, so
// the first token pays nothing. A tensor libork refuses stays unimported: supports_op
// declines its MUL_MATs or the first one reports the problem.
void import_on_load(ggml_backend_buffer_t b, const ggml_tensor* t) {
  if (b->usage != GGML_BACKEND_BUFFER_USAGE_WEIGHTS || !weight_type_supported(t->type)) return;
  if (!ggml_is_contiguous(t)) return;
  for (int64_t i3 = 0; i3 < t->ne[3]; ++i3) {
    for (int64_t i2 = 0; i2 < t->ne[2]; ++i2) {
      const uint8_t* p = static_cast<const uint8_t*>(t->data) + i2 * t->nb[2] + i3 * t->nb[3];
      if (ctx(b)->find_or_import(t->type, p, t->ne[0], t->ne[1]) == nullptr) return;
    }
  }
}

void buffer_free(ggml_backend_buffer_t b) {
  Buffer* c = ctx(b);
  for (auto& [at, s] : c->slices) c->drop(s);
  std::free(c->base);
  delete c;
}

void* buffer_base(ggml_backend_buffer_t b) { return ctx(b)->base; }

void buffer_memset(ggml_backend_buffer_t b, ggml_tensor* t, uint8_t value, size_t offset, size_t size) {
  uint8_t* p = static_cast<uint8_t*>(t->data) + offset;
  ctx(b)->invalidate(p, size);
  std::memset(p, value, size);
}

void buffer_set(ggml_backend_buffer_t b, ggml_tensor* t, const void* data, size_t offset, size_t size) {
  uint8_t* p = static_cast<uint8_t*>(t->data) + offset;
  ctx(b)->invalidate(p, size);
  std::memcpy(p, data, size);
  if (offset == 0 && size == ggml_nbytes(t)) import_on_load(b, t);
}

void buffer_get(ggml_backend_buffer_t, const ggml_tensor* t, void* data, size_t offset, size_t size) {
  std::memcpy(data, static_cast<const uint8_t*>(t->data) + offset, size);
}

bool buffer_cpy(ggml_backend_buffer_t b, const ggml_tensor* src, ggml_tensor* dst) {
  if (src->buffer == nullptr || !ggml_backend_buffer_is_host(src->buffer)) return false;
  ctx(b)->invalidate(dst->data, ggml_nbytes(dst));
  std::memcpy(dst->data, src->data, ggml_nbytes(src));
  return true;
}

void buffer_clear(ggml_backend_buffer_t b, uint8_t value) {
  Buffer* c = ctx(b);
  c->invalidate(c->base, c->size);
  std::memset(c->base, value, c->size);
}

const char* buft_name(ggml_backend_buffer_type_t) { return "ORK"; }

// An allocation past what the device can take now (ork_device_memory: the NPU window's
// largest free range, or host memory on cpu) fails as ggml's buffer allocation failure,
// which llama.cpp reports; the resident copies live in that window.
ggml_backend_buffer_t buft_alloc(ggml_backend_buffer_type_t buft, size_t size) {
  Device* d = static_cast<Device*>(buft->context);
  ork_memory_info mem{};
  mem.struct_size = sizeof mem;
  if (ork_device_memory(d->dev, &mem) == ORK_OK && size > mem.largest_allocation_bytes) {
    std::fprintf(stderr, "ggml-ork: a buffer of %zu bytes does not fit the device (%llu bytes free)\n",
                 size, static_cast<unsigned long long>(mem.largest_allocation_bytes));
    return nullptr;
  }
  const size_t rounded = (size + kAlignment - 1) / kAlignment * kAlignment;
  void* base = std::aligned_alloc(kAlignment, rounded == 0 ? kAlignment : rounded);
  if (base == nullptr) return nullptr;
  ggml_backend_buffer_i iface{};
  iface.free_buffer = buffer_free;
  iface.get_base = buffer_base;
  iface.memset_tensor = buffer_memset;
  iface.set_tensor = buffer_set;
  iface.get_tensor = buffer_get;
  iface.cpy_tensor = buffer_cpy;
  iface.clear = buffer_clear;
  return ggml_backend_buffer_init(buft, iface, new Buffer{d, static_cast<uint8_t*>(base), size, {}, {}},
                                  size);
}

// A weight's share of the buffer: the larger of ggml's bytes (the host copy ggml reads, in
// place) and the NPU window bytes of its packed copies, one per 2-D slice, as libork sizes
// them (packed_slice_bytes). A buffer's size, the sum, is then at least what its weights take
// of the window, so buft_alloc's check against the window is a check of the packed copies: a
// model whose packed weights do not fit fails as ggml's buffer allocation failure, before
// anything is read. The host bytes past ggml's are allocated but never written (pages the
// OS does not commit until touched).
size_t buft_alloc_size(ggml_backend_buffer_type_t, const ggml_tensor* t) {
  const size_t bytes = ggml_nbytes(t);
  if (!weight_type_supported(t->type)) return bytes;
  const uint64_t slice = packed_slice_bytes(t->type, t->ne[0], t->ne[1]);
  const uint64_t packed = slice * static_cast<uint64_t>(t->ne[2]) * static_cast<uint64_t>(t->ne[3]);
  return packed > bytes ? static_cast<size_t>(packed) : bytes;
}

size_t buft_alignment(ggml_backend_buffer_type_t) { return kAlignment; }
bool buft_is_host(ggml_backend_buffer_type_t) { return true; }

}  // namespace

ggml_backend_buffer_type_t buffer_type(Device& d) {
  if (d.buft.context == nullptr) {
    d.buft.iface.get_name = buft_name;
    d.buft.iface.alloc_buffer = buft_alloc;
    d.buft.iface.get_alignment = buft_alignment;
    d.buft.iface.get_alloc_size = buft_alloc_size;
    d.buft.iface.is_host = buft_is_host;
    d.buft.device = &d.gdev;
    d.buft.context = &d;
  }
  return &d.buft;
}

bool is_ork_buffer_type(ggml_backend_buffer_type_t buft) {
  return buft != nullptr && buft->iface.alloc_buffer == buft_alloc;
}

const Resident* resident_weights(ggml_backend_buffer_t buffer, ggml_type type, const void* data,
                                 int64_t k, int64_t n) {
  return ctx(buffer)->find_or_import(type, data, k, n);
}

}  // namespace ork_ggml
