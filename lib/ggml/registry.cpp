// The ggml backend registry "ORK": loaded by stock llama.cpp from GGML_BACKEND_PATH (the
// shared library exports ggml_backend_init, ggml's GGML_BACKEND_DL_IMPL, and its registry
// carries GGML_BACKEND_API_VERSION, ggml/src/ggml-backend-impl.h). One device, libork's
// default (ORK_DEVICE, else the NPU when there is one, else emu), of type ACCEL: llama.cpp
// then places the weights of the ops it supports in its buffer type and runs the rest on its
// CPU backend. A device that does not open registers no device, with one line on stderr.
// docs/llama-cpp.md "How ggml backends load".
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "ork_ggml.h"

namespace ork_ggml {
namespace {

struct Backend {
  Device* device;
  int n_threads = 0;  // ggml_backend_set_n_threads; 0 = libork's default
};

bool stats_wanted() {
  const char* v = std::getenv("ORK_GGML_STATS");
  return v != nullptr && std::strcmp(v, "1") == 0;
}

// The counts, then libork's own figures for the device (ork_device_get_stats, cumulative):
// the time inside libork and the device's share of it, so that a run splits into NPU time
// (device_ns: on emu the modelled board time) and the CPU's (everything else).
void print_stats() {
  std::fprintf(stderr, "ggml-ork: MUL_MAT on ORK: %llu, declined: %llu, weight tensors imported: %llu\n",
               static_cast<unsigned long long>(stats().mul_mat_ran.load()),
               static_cast<unsigned long long>(stats().mul_mat_declined.load()),
               static_cast<unsigned long long>(stats().weights_imported.load()));
  ork_stats s{};
  s.struct_size = sizeof s;
  if (the_device() == nullptr || ork_device_get_stats(the_device()->dev, &s) != ORK_OK) return;
  std::fprintf(stderr, "ggml-ork: libork calls: %llu, in libork: %.3f ms, device: %.3f ms, emulator compute: %.3f ms\n",
               static_cast<unsigned long long>(s.calls), static_cast<double>(s.wall_ns) / 1e6,
               static_cast<double>(s.device_ns) / 1e6, static_cast<double>(s.emulator_ns) / 1e6);
}

bool is_no_op(ggml_op op) {
  return op == GGML_OP_NONE || op == GGML_OP_VIEW || op == GGML_OP_RESHAPE || op == GGML_OP_PERMUTE ||
         op == GGML_OP_TRANSPOSE;
}

// ---- backend ----------------------------------------------------------------------------

const char* backend_name(ggml_backend_t) { return "ORK"; }

void backend_free(ggml_backend_t b) {
  delete static_cast<Backend*>(b->context);
  delete b;
}

ggml_status backend_compute(ggml_backend_t b, ggml_cgraph* graph) {
  Backend* be = static_cast<Backend*>(b->context);
  for (int i = 0; i < ggml_graph_n_nodes(graph); ++i) {
    const ggml_tensor* node = ggml_graph_node(graph, i);
    if (is_no_op(node->op) || ggml_is_empty(node)) continue;
    if (node->op != GGML_OP_MUL_MAT && node->op != GGML_OP_MUL_MAT_ID) {
      std::fprintf(stderr, "ggml-ork: %s (%s) was not offered to ORK\n", node->name, ggml_op_name(node->op));
      return GGML_STATUS_FAILED;
    }
    const ggml_status s = node->op == GGML_OP_MUL_MAT ? compute_mul_mat(*be->device, be->n_threads, node)
                                                       : compute_mul_mat_id(*be->device, be->n_threads, node);
    if (s != GGML_STATUS_SUCCESS) return s;
  }
  return GGML_STATUS_SUCCESS;
}

void set_n_threads(ggml_backend_t b, int n_threads) {
  static_cast<Backend*>(b->context)->n_threads = n_threads;
}

ggml_guid_t guid() {
  static ggml_guid g = {0x6f, 0x72, 0x6b, 0x2d, 0x67, 0x67, 0x6d, 0x6c,
                        0x2d, 0x6e, 0x70, 0x75, 0x2d, 0x30, 0x30, 0x31};  // "ork-ggml-npu-001"
  return &g;
}

// ---- device -----------------------------------------------------------------------------

Device* dev_ctx(ggml_backend_dev_t d) { return static_cast<Device*>(d->context); }

const char* dev_name(ggml_backend_dev_t) { return "ORK"; }
const char* dev_description(ggml_backend_dev_t d) { return dev_ctx(d)->description; }

// The NPU's address window (ork_device_memory): free = the largest buffer that may be made
// now, total = the window (the cpu device has none: its free host memory twice).
void dev_memory(ggml_backend_dev_t d, size_t* free, size_t* total) {
  ork_memory_info mem{};
  mem.struct_size = sizeof mem;
  *free = *total = 0;
  if (ork_device_memory(dev_ctx(d)->dev, &mem) != ORK_OK) return;
  *free = mem.largest_allocation_bytes;
  *total = mem.window_bytes != 0 ? mem.window_bytes : mem.largest_allocation_bytes;
}

enum ggml_backend_dev_type dev_type(ggml_backend_dev_t) { return GGML_BACKEND_DEVICE_TYPE_ACCEL; }

void dev_props(ggml_backend_dev_t d, ggml_backend_dev_props* props) {
  props->name = dev_name(d);
  props->description = dev_description(d);
  dev_memory(d, &props->memory_free, &props->memory_total);
  props->type = dev_type(d);
  props->device_id = nullptr;
  props->caps = {};
}

ggml_backend_t dev_init_backend(ggml_backend_dev_t d, const char*) {
  ggml_backend_i iface{};
  iface.get_name = backend_name;
  iface.free = backend_free;
  iface.graph_compute = backend_compute;
  return new ggml_backend{guid(), iface, d, new Backend{dev_ctx(d)}};
}

ggml_backend_buffer_type_t dev_buffer_type(ggml_backend_dev_t d) { return buffer_type(*dev_ctx(d)); }

bool dev_supports_op(ggml_backend_dev_t, const ggml_tensor* op) {
  if (is_no_op(op->op)) return true;
  if (op->op != GGML_OP_MUL_MAT && op->op != GGML_OP_MUL_MAT_ID) return false;
  const bool ok = op->op == GGML_OP_MUL_MAT ? supports_mul_mat(op) : supports_mul_mat_id(op);
  if (!ok) stats().mul_mat_declined.fetch_add(1);
  return ok;
}

// Its own buffers, and host memory (activations the CPU backend wrote are read in place).
bool dev_supports_buft(ggml_backend_dev_t, ggml_backend_buffer_type_t buft) {
  return is_ork_buffer_type(buft) || ggml_backend_buft_is_host(buft);
}

bool dev_offload_op(ggml_backend_dev_t, const ggml_tensor*) { return false; }

// ---- registry ---------------------------------------------------------------------------

Device* open_device() {
  Device* d = new Device;
  if (ork_device_open(nullptr, &d->dev) != ORK_OK) {
    std::fprintf(stderr, "ggml-ork: no ORK device (libork's default device did not open: %s)\n",
                 ork_last_error());
    delete d;
    return nullptr;
  }
  ork_device_info info{};
  ork_device_get_info(d->dev, &info);
  d->is_cpu = std::strcmp(info.backend, "cpu") == 0;
  d->cores = info.cores;
  std::snprintf(d->description, sizeof d->description, "libork %s %s%s%s", ork_version(), info.backend,
                info.node[0] != '\0' ? " " : "", info.node);
  ggml_backend_device_i& i = d->gdev.iface;
  i.get_name = dev_name;
  i.get_description = dev_description;
  i.get_memory = dev_memory;
  i.get_type = dev_type;
  i.get_props = dev_props;
  i.init_backend = dev_init_backend;
  i.get_buffer_type = dev_buffer_type;
  i.supports_op = dev_supports_op;
  i.supports_buft = dev_supports_buft;
  i.offload_op = dev_offload_op;
  d->gdev.context = d;
  return d;
}

const char* reg_name(ggml_backend_reg_t) { return "ORK"; }
size_t reg_count(ggml_backend_reg_t) { return the_device() != nullptr ? 1 : 0; }
ggml_backend_dev_t reg_device(ggml_backend_reg_t, size_t index) {
  return index == 0 && the_device() != nullptr ? &the_device()->gdev : nullptr;
}
void* reg_proc(ggml_backend_reg_t, const char* name) {
  if (std::strcmp(name, "ggml_backend_set_n_threads") == 0) return reinterpret_cast<void*>(set_n_threads);
  return nullptr;
}

ggml_backend_reg* registry() {
  static ggml_backend_reg reg;
  static std::once_flag once;
  std::call_once(once, [] {
    reg.api_version = GGML_BACKEND_API_VERSION;
    reg.iface.get_name = reg_name;
    reg.iface.get_device_count = reg_count;
    reg.iface.get_device = reg_device;
    reg.iface.get_proc_address = reg_proc;
    if (Device* d = the_device()) d->gdev.reg = &reg;
    if (stats_wanted()) std::atexit(print_stats);
  });
  return &reg;
}

}  // namespace

Stats& stats() {
  static Stats s;
  return s;
}

Device* the_device() {
  static Device* d = open_device();
  return d;
}

}  // namespace ork_ggml

extern "C" __attribute__((visibility("default"))) ggml_backend_reg_t ggml_backend_init(void) {
  return ork_ggml::registry();
}
