// ork_batch_*: record once (a context per matmul, their task lists chained per core into one
// submit descriptor), replay with only A's contents changing (batch.h).
#include "lib/api/batch.h"

#include <mutex>

#include <fmt/format.h>

#include "lib/api/device.h"
#include "lib/api/error.h"
#include "lib/api/job_queue.h"
#include "lib/api/matmul_t.h"
#include "lib/api/weights.h"
#include "lib/matmul/job.h"

namespace ork::api {

void batch_device_closed(ork_batch& b) {
  b.device = nullptr;
  for (BatchItem& it : b.items) it.ctx.reset();
}

void batch_weights_gone(ork_batch& b, const ork_weights* w) {
  for (BatchItem& it : b.items)
    if (it.weights == w) {
      it.ctx.reset();
      it.weights = nullptr;
      b.recorded = false;
      b.refused = "ork_batch_submit: weights of the batch were destroyed: make a new batch";
    }
}

namespace {

ork_status batch_add(ork_batch* b, const ork_weights* weights, const ork_tensor* a, int64_t m, const ork_tensor* c,
                     const ork_matmul_options* options) {
  constexpr const char* fn = "ork_batch_add_matmul";
  if (b == nullptr) return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}: batch is NULL", fn));
  if (!handle_live(HandleKind::batch, b))
    return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}: not a live batch (destroyed already?)", fn));
  if (b->device == nullptr) return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}: the batch's device was closed", fn));
  std::lock_guard lock(b->device->mutex);
  TensorCall t;
  if (auto s = begin_tensor_call(fn, b->device, weights, a, m, c, options, &t); s != ORK_OK) return s;
  BatchItem it;
  it.weights = weights;
  it.m = m;
  it.opt = t.opt;
  it.run = t.run;
  it.types = t.types;
  it.a_op = t.a_op;
  it.c_op = t.c_op;
  it.a_ref = t.a_ref;
  it.c_ref = t.c_ref;
  it.a_use = BufferUse(t.a_ref.buffer);
  it.c_use = BufferUse(t.c_ref.buffer);
  t.c = nullptr;  // nothing was computed: finish only ends the CPU accesses begun
  if (auto s = finish_tensor_call(t, ORK_OK); s != ORK_OK) return s;
  if (it.opt.stats != nullptr)
    return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}: options.stats is per call: a batch's job reports its "
                                                    "matmuls together in the device's statistics", fn));
  b->items.push_back(std::move(it));
  b->recorded = false;  // the next submit records again, with this matmul
  b->desc = {};
  for (BatchItem& i : b->items) i.ctx.reset();
  return ok();
}

// The first submit after an add: a context per matmul, then one descriptor of them all.
ork_status record(driver::Kmd& kmd, ork_batch& b) {
  std::vector<matmul::Context*> ctxs;
  for (BatchItem& it : b.items) {
    const matmul::OwnedWeights* rw = nullptr;
    matmul::RunOptions ro;
    if (auto s = npu_call(kmd, *it.weights, it.types, it.opt, it.run, &rw, &ro); s != ORK_OK) return s;
    auto ctx = matmul::build_call_context(kmd, **rw, it.m, ro, npu_call_plan);
    if (!ctx) return fail(ctx.error());
    it.ctx = std::move(*ctx);
    ctxs.push_back(it.ctx.get());
  }
  auto desc = matmul::chain_contexts(kmd, ctxs);
  if (!desc) return fail(ORK_E_UNSUPPORTED, fmt::format("ork_batch_submit: {}: submit that matmul with "
                                                        "ork_matmul_submit", desc.error().message));
  auto checked = kmd.check(std::move(*desc));  // once: every replay submits it as checked
  if (!checked) return fail(checked.error());
  b.desc = std::move(*checked);
  b.recorded = true;
  return ORK_OK;
}

// One matmul into the job: A read now (gathered if strided, bracketed by its buffer's CPU
// syncs) and packed; C written at completion into `s` (held, its CPU access begun first).
ork_status add_item(const BatchItem& it, matmul::Job& mm, JobStep& s) {
  s.c_op = it.c_op;
  s.c_ref = it.c_ref;
  s.c_use = BufferUse(it.c_ref.buffer);
  s.c = output_target(s.c_ref, s.c_op, s.c_scratch);
  if (it.c_ref.buffer) {
    if (auto st = buffer_begin_cpu(*it.c_ref.buffer, true, "ork_batch_submit"); st != ORK_OK) return st;
    s.c_started = true;
  }
  std::vector<uint8_t> scratch;
  if (it.a_ref.buffer)
    if (auto st = buffer_begin_cpu(*it.a_ref.buffer, false, "ork_batch_submit"); st != ORK_OK) return st;
  const void* a = dense_input(it.a_ref, it.a_op, scratch);
  auto added = mm.add(it.ctx, a, s.c);
  ork_status end = ORK_OK;
  if (it.a_ref.buffer) end = buffer_end_cpu(*it.a_ref.buffer, false, "ork_batch_submit");
  if (!added) return fail(added.error());
  return end;
}

// The batch as one matmul job (lib/matmul/job.h) of its chained descriptor: packing each
// matmul's A first completes the batch's previous job still in flight on its contexts.
}  // namespace

ork_status submit_npu_batch(driver::Kmd& kmd, ork_batch& b, ork_job& job) {
  matmul::RunStats st;
  if (!b.recorded) {
    if (auto s = record(kmd, b); s != ORK_OK) return s;
    st.built = true;
  }
  auto mm = std::make_unique<matmul::Job>(kmd, st);
  job.steps.reserve(b.items.size());
  for (const BatchItem& it : b.items) {
    job.steps.emplace_back();
    if (auto s = add_item(it, *mm, job.steps.back()); s != ORK_OK) return s;
  }
  if (auto s = mm->submit(&b.desc); !s) return fail(s.error());
  job.mm = std::move(mm);
  return ORK_OK;
}

namespace {

ork_status batch_submit(ork_batch* b, ork_job** out) {
  constexpr const char* fn = "ork_batch_submit";
  if (out == nullptr) return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}: out is NULL", fn));
  *out = nullptr;
  if (b == nullptr) return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}: batch is NULL", fn));
  if (!handle_live(HandleKind::batch, b))
    return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}: not a live batch (destroyed already?)", fn));
  if (b->device == nullptr) return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}: the batch's device was closed", fn));
  if (!b->refused.empty()) return fail(ORK_E_INVALID_ARGUMENT, b->refused);
  if (b->items.empty()) return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}: the batch has no matmul", fn));
  ork_device& dev = *b->device;
  std::lock_guard lock(dev.mutex);
  auto job = std::make_unique<ork_job>();
  job->device = &dev;
  job->meter = std::make_unique<CallMeter>(dev);
  job->meter->calls = b->items.size();
  // One matmul job on the NPU, or (cpu) every matmul now, the job born complete.
  if (auto s = dev.backend->submit_batch(*b, *job); s != ORK_OK) {
    const std::string why = ork_last_error();
    for (JobStep& st : job->steps)
      if (st.c_started) buffer_end_cpu(*st.c_ref.buffer, true, fn);
    return fail(s, why);
  }
  jobs_of(dev).add(job.get());
  *out = job.release();
  return ok();
}

ork_status batch_create(ork_device* device, ork_batch** out) {
  if (out == nullptr) return fail(ORK_E_INVALID_ARGUMENT, "ork_batch_create: out is NULL");
  *out = nullptr;
  if (device == nullptr) return fail(ORK_E_INVALID_ARGUMENT, "ork_batch_create: device is NULL");
  std::lock_guard lock(device->mutex);
  auto b = std::make_unique<ork_batch>();
  b->device = device;
  jobs_of(*device).add_batch(b.get());
  *out = b.release();
  return ok();
}

void batch_destroy(ork_batch* b) {
  if (b == nullptr) return;
  if (!handle_dies(HandleKind::batch, b)) {
    (void)fail(ORK_E_INVALID_ARGUMENT, "ork_batch_destroy: not a live batch (destroyed already?): ignored");
    return;
  }
  if (b->device != nullptr) {
    // A job of the batch still in flight holds its contexts (lib/matmul/job.h): they go
    // with it, once the NPU is done with their BOs.
    std::lock_guard lock(b->device->mutex);
    jobs_of(*b->device).remove_batch(b);
    for (BatchItem& it : b->items) it.ctx.reset();
  }
  delete b;
}

}  // namespace
}  // namespace ork::api

extern "C" {

ORK_API ork_status ork_batch_create(ork_device* device, ork_batch** out) {
  return ork::api::guarded([&] { return ork::api::batch_create(device, out); });
}

ORK_API ork_status ork_batch_add_matmul(ork_batch* batch, const ork_weights* weights, const ork_tensor* a, int64_t m,
                                        const ork_tensor* c, const ork_matmul_options* options) {
  return ork::api::guarded([&] { return ork::api::batch_add(batch, weights, a, m, c, options); });
}

ORK_API ork_status ork_batch_submit(ork_batch* batch, ork_job** out) {
  return ork::api::guarded([&] { return ork::api::batch_submit(batch, out); });
}

ORK_API void ork_batch_destroy(ork_batch* batch) {
  try {
    ork::api::batch_destroy(batch);
  } catch (...) {  // nothing crosses the C API
  }
}

}  // extern "C"
