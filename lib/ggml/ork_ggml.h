// The ggml backend on libork's public C API (docs/llama-cpp.md): what its four files share.
// registry.cpp: the backend registry, the one device (libork's default), the backend (graph
// compute), the statistics. ggml_buffer.cpp: the buffer type, host memory holding ggml's bytes,
// and each buffer's imported weights. mul_mat.cpp: which MUL_MATs run here, and running them.
// requant.cpp: ggml's blocks requantised to one scale per row (the fast path).
#ifndef ORK_LIB_GGML_ORK_GGML_H
#define ORK_LIB_GGML_ORK_GGML_H

#include <ork/ork.h>

#include <atomic>
#include <cstdint>

#include "ggml-backend-impl.h"
#include "ggml.h"

namespace ork_ggml {

// The process's one device, opened by the registry; never closed (llama.cpp keeps backend
// registries until exit, and a close at static destruction would race libork's own).
struct Device {
  ork_device* dev = nullptr;
  bool is_cpu = false;      // libork's "cpu" backend: the thread count reaches its cores option
  int32_t cores = 0;        // ork_device_info.cores
  char description[128] = {};
  ggml_backend_buffer_type buft{};
  ggml_backend_device gdev{};
};

// ORK_GGML_STATS=1 prints these at exit (registry.cpp).
struct Stats {
  std::atomic<uint64_t> mul_mat_ran{0};      // MUL_MAT nodes computed on ORK
  std::atomic<uint64_t> mul_mat_declined{0}; // supports_op answers "no" to a MUL_MAT
  std::atomic<uint64_t> weights_imported{0}; // weight slices made resident (once each)
};
Stats& stats();

// One resident 2-D weight slice: fp16 weights (F16, BF16) or ggml blocks (Q8_0, Q4_0, Q4_1).
struct Resident {
  ork_weights* w = nullptr;
  ork_qweights* q = nullptr;
};

// buffer.cpp
ggml_backend_buffer_type_t buffer_type(Device& d);
bool is_ork_buffer_type(ggml_backend_buffer_type_t buft);
// The resident weights of the K x N slice of `type` at `data` in `buffer` (an ORK buffer),
// imported on first use when the load did not import them. nullptr: ork_last_error() says why.
const Resident* resident_weights(ggml_backend_buffer_t buffer, ggml_type type, const void* data,
                                 int64_t k, int64_t n);

// mul_mat.cpp
bool weight_type_supported(ggml_type type);
bool supports_mul_mat(const ggml_tensor* op);
// Imports one K x N slice (rows of K along ggml's ne0, N rows) from ggml's bytes.
ork_status import_slice(ork_device* dev, ggml_type type, const void* data, int64_t k, int64_t n,
                        Resident* out);
ggml_status compute_mul_mat(Device& d, int n_threads, const ggml_tensor* node);
bool supports_mul_mat_id(const ggml_tensor* op);
ggml_status compute_mul_mat_id(Device& d, int n_threads, const ggml_tensor* node);

// requant.cpp: ORK_GGML_EXACT=1 imports ggml's blocks exactly (one NPU task per 32-wide
// block); otherwise they are requantised to int8 with one scale per row (one whole-K matmul).
bool exact_blocks();
ork_status import_requantised(ork_device* dev, ggml_type type, const void* data, int64_t k, int64_t n,
                              ork_qweights** out);
// The NPU window bytes libork gives one imported K x N slice of a weight type the backend
// imports (its packed copy, page-rounded); 0 when libork cannot size it.
uint64_t packed_slice_bytes(ggml_type type, int64_t k, int64_t n);

Device* the_device();  // registry.cpp: nullptr when libork's default device did not open

}  // namespace ork_ggml

#endif  // ORK_LIB_GGML_ORK_GGML_H
