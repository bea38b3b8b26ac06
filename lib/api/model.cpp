// ork_model / ork_session: the executor of lib/exec behind the C API (docs/execution.md,
// docs/library.md "Streamed models").
#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>

#include <fmt/format.h>

#include "lib/api/device.h"
#include "lib/api/error.h"
#include "lib/api/handles.h"
#include "lib/api/job.h"
#include "lib/api/struct_size.h"
#include "lib/exec/executor.h"
#include "lib/exec/pack_file.h"
#include "lib/exec/plan.h"
#include "ork/ork.h"

using ork::api::fail;
using ork::api::guarded;

using ork::api::HandleKind;

// Shared: the caller's handle holds one reference and each session one more, so that
// closing a model before its sessions leaves them a model to run (this was a use after
// free). The handle dies at ork_model_close; the model with its last reference.
struct ork_model {
  ork_model(std::string p, ork::exec::PackedModel m) : path(std::move(p)), packed(std::move(m)) {}
  ork::api::Live<HandleKind::model> live{this};
  std::atomic<int> refs{1};
  std::string path;
  ork::exec::PackedModel packed;
};

namespace {

void release_model(const ork_model* m) {
  if (m != nullptr && const_cast<ork_model*>(m)->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete m;
}

// A session's reference on its model.
struct ModelRef {
  explicit ModelRef(const ork_model* m) : model(m) { const_cast<ork_model*>(m)->refs.fetch_add(1, std::memory_order_relaxed); }
  ~ModelRef() { release_model(model); }
  ModelRef(const ModelRef&) = delete;
  ModelRef& operator=(const ModelRef&) = delete;
  const ork_model* model;
};

}  // namespace

struct ork_session {
  ork_session(ork_device* d, const ork_model* m) : keep_device(d), device(d), keep_model(m), model(m) {}
  ork::api::Live<HandleKind::session> live{this};
  ork::api::DeviceRef keep_device;  // the device outlives the session's use of it (device.h)
  ork_device* device = nullptr;
  ModelRef keep_model;
  const ork_model* model = nullptr;
  ork::exec::PlanOptions options;
  ork::exec::ExecPlan plan;
  ork::exec::Activation output;
  bool has_output = false;
};

namespace {

int32_t dtype_code(ork::matmul::DType d) { return ork::matmul::dtype_info(d).code; }  // the dtype table

// Bytes of an activation of rows x hidden in the API's format.
size_t activation_bytes(const ork::exec::ModelDesc& d, int64_t rows) {
  return static_cast<size_t>(rows * d.hidden) * (d.dtype == ork::matmul::DType::fp16 ? 2 : 1);
}

ork_status check_input(const ork::exec::ModelDesc& d, int64_t m, const void* input, size_t bytes,
                       ork::exec::Activation& a) {
  const size_t want = activation_bytes(d, m);
  if (bytes != want)
    return fail(ORK_E_INVALID_ARGUMENT, fmt::format("ork_session_run_token: input_bytes = {}: m x hidden = {} x {} needs {}",
                                                    bytes, m, d.hidden, want));
  a.rows = m;
  a.width = d.hidden;
  if (d.dtype == ork::matmul::DType::fp16) {
    a.f16.resize(static_cast<size_t>(m * d.hidden));
    std::memcpy(a.f16.data(), input, bytes);
    return ORK_OK;
  }
  const auto* p = static_cast<const int8_t*>(input);
  a.i8.assign(p, p + bytes);
  if (d.dtype == ork::matmul::DType::int4)
    for (size_t i = 0; i < a.i8.size(); ++i)
      if (a.i8[i] < -8 || a.i8[i] > 7)
        return fail(ORK_E_INVALID_ARGUMENT,
                    fmt::format("ork_session_run_token: input element {} = {}: int4 activations are -8..7", i, a.i8[i]));
  return ORK_OK;
}

}  // namespace

extern "C" {

ORK_API ork_status ork_model_open(const char* path, ork_model** out) {
  return guarded([&] {
    if (out == nullptr) return fail(ORK_E_INVALID_ARGUMENT, "ork_model_open: out is NULL");
    *out = nullptr;
    if (path == nullptr) return fail(ORK_E_INVALID_ARGUMENT, "ork_model_open: path is NULL");
    auto m = ork::exec::read_packed(path);
    // A file that is missing or unreadable is a bad argument here, not a missing device.
    if (!m) return fail(ORK_E_INVALID_ARGUMENT, m.error().message);
    *out = new ork_model{path, std::move(*m)};
    return ork::api::ok();
  });
}

ORK_API ork_status ork_model_get_info(const ork_model* model, ork_model_info* info) {
  if (model == nullptr) return fail(ORK_E_INVALID_ARGUMENT, "ork_model_get_info: model is NULL");
  if (!ork::api::handle_live(HandleKind::model, model))
    return fail(ORK_E_INVALID_ARGUMENT, "ork_model_get_info: not an open model (closed already?)");
  if (info == nullptr) return fail(ORK_E_INVALID_ARGUMENT, "ork_model_get_info: info is NULL");
  ork_model_info full{};
  full.struct_size = sizeof(ork_model_info);
  const auto& d = model->packed.desc;
  full.dtype = dtype_code(d.dtype);
  full.hidden = d.hidden;
  full.layers = d.layers;
  full.matmuls_per_layer = static_cast<int32_t>(d.matmuls.size());
  full.weight_bytes = model->packed.weight_bytes();
  uint64_t largest = 0;
  for (int l = 0; l < d.layers; ++l) {
    uint64_t s = 0;
    for (size_t j = 0; j < d.matmuls.size(); ++j)
      s += ork::exec::align_up(model->packed.tensor(l, static_cast<int>(j)).bytes, ork::exec::kPackAlign);
    largest = std::max(largest, s);
  }
  full.largest_layer_bytes = largest;
  // The output struct rule (struct_size.h): 0 refused, a smaller struct gets the fields it has.
  if (auto st = ork::api::write_out_struct("ork_model_get_info: info", full, info); st != ORK_OK) return st;
  return ork::api::ok();
}

// Drops the handle's reference: sessions made on the model keep it until they are destroyed.
ORK_API void ork_model_close(ork_model* model) {
  if (model == nullptr) return;
  if (!ork::api::handle_dies(HandleKind::model, model)) {
    (void)fail(ORK_E_INVALID_ARGUMENT, "ork_model_close: not an open model (closed already?): ignored");
    return;
  }
  release_model(model);
}

ORK_API ork_status ork_session_create(ork_device* device, const ork_model* model, const ork_session_options* options,
                                      ork_session** out) {
  return guarded([&] {
    if (out == nullptr) return fail(ORK_E_INVALID_ARGUMENT, "ork_session_create: out is NULL");
    *out = nullptr;
    if (device == nullptr) return fail(ORK_E_INVALID_ARGUMENT, "ork_session_create: device is NULL");
    if (model == nullptr) return fail(ORK_E_INVALID_ARGUMENT, "ork_session_create: model is NULL");
    if (!ork::api::handle_live(HandleKind::device, device))
      return fail(ORK_E_INVALID_ARGUMENT, "ork_session_create: not an open device (closed already?)");
    if (!ork::api::handle_live(HandleKind::model, model))
      return fail(ORK_E_INVALID_ARGUMENT, "ork_session_create: not an open model (closed already?)");
    ork_session_options o{};
    if (auto st = ork::api::read_options("ork_session_create", options, &o); st != ORK_OK) return st;
    auto s = std::make_unique<ork_session>(device, model);
    s->options.budget_bytes = o.budget_bytes == 0 ? (uint64_t{512} << 20) : o.budget_bytes;
    s->options.m = o.m == 0 ? 1 : o.m;
    s->options.tokens = 1;
    if (o.order < ORK_ORDER_SCHEDULED || o.order > ORK_ORDER_SEQUENTIAL)
      return fail(ORK_E_INVALID_ARGUMENT, fmt::format("ork_session_create: order = {}: not an ork_order", o.order));
    s->options.order = static_cast<ork::exec::Order>(o.order);
    const int dev_cores = device->info.cores;
    if (o.cores < 0 || o.cores > dev_cores)
      return fail(ORK_E_INVALID_ARGUMENT,
                  fmt::format("ork_session_create: cores = {}: the device has 1..{} (0 = all)", o.cores, dev_cores));
    if (o.m < 0 || o.m > 4096)
      return fail(ORK_E_INVALID_ARGUMENT, fmt::format("ork_session_create: m = {}: must be 1..4096 (0 = 1)", o.m));
    s->options.cores = o.cores == 0 ? dev_cores : o.cores;
    auto plan = ork::exec::build_plan(model->packed, s->options);
    if (!plan) return fail(plan.error());
    s->plan = std::move(*plan);
    *out = s.release();
    return ork::api::ok();
  });
}

ORK_API ork_status ork_session_run_token(ork_session* session, const void* input, size_t input_bytes) {
  return guarded([&] {
    if (session == nullptr) return fail(ORK_E_INVALID_ARGUMENT, "ork_session_run_token: session is NULL");
    if (!ork::api::handle_live(HandleKind::session, session))
      return fail(ORK_E_INVALID_ARGUMENT, "ork_session_run_token: not a live session (destroyed already?)");
    if (session->device->closed)
      return fail(ORK_E_INVALID_ARGUMENT, "ork_session_run_token: the session's device was closed");
    const auto& d = session->model->packed.desc;
    ork::exec::Activation in;
    ork::exec::RunOptions ro;
    if (input != nullptr) {
      if (auto st = check_input(d, session->options.m, input, input_bytes, in); st != ORK_OK) return st;
      ro.first_input = &in;
    }
    ork_device& dev = *session->device;
    std::lock_guard lock(dev.mutex);  // the device's queue (device.h)
    if (dev.jobs) ork::api::jobs_of(dev).complete_all();  // the executor waits on the kernel itself
    const ork::exec::DeviceRef ref = ork::api::exec_device(dev, session->options.cores);
    session->has_output = false;
    auto r = ork::exec::run_plan(session->model->path, session->model->packed, session->plan, session->options, ref, ro);
    if (!r) return fail(r.error());
    session->output = std::move(r->chain.outputs.at(0));
    session->has_output = true;
    return ork::api::ok();
  });
}

ORK_API ork_status ork_session_read_output(const ork_session* session, void* out, size_t capacity, size_t* size) {
  if (session == nullptr) return fail(ORK_E_INVALID_ARGUMENT, "ork_session_read_output: session is NULL");
  if (!ork::api::handle_live(HandleKind::session, session))
    return fail(ORK_E_INVALID_ARGUMENT, "ork_session_read_output: not a live session (destroyed already?)");
  if (!session->has_output) return fail(ORK_E_INVALID_ARGUMENT, "ork_session_read_output: no token has run");
  const auto& d = session->model->packed.desc;
  const size_t bytes = activation_bytes(d, session->options.m);
  if (size != nullptr) *size = bytes;
  if (out == nullptr)
    return fail(ORK_E_INVALID_ARGUMENT,
                fmt::format("ork_session_read_output: out is NULL (the output is {} bytes; *size has them)", bytes));
  if (capacity < bytes)
    return fail(ORK_E_INVALID_ARGUMENT,
                fmt::format("ork_session_read_output: capacity = {}: the output is {} bytes", capacity, bytes));
  if (d.dtype == ork::matmul::DType::fp16)
    std::memcpy(out, session->output.f16.data(), bytes);
  else
    std::memcpy(out, session->output.i8.data(), bytes);
  return ork::api::ok();
}

ORK_API void ork_session_destroy(ork_session* session) {
  if (session == nullptr) return;
  if (!ork::api::handle_dies(HandleKind::session, session)) {
    (void)fail(ORK_E_INVALID_ARGUMENT, "ork_session_destroy: not a live session (destroyed already?): ignored");
    return;
  }
  delete session;
}

}  // extern "C"
