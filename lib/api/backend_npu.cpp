// The NPU devices' backend (backend.h): rknpu, rocket and the emulator's fake kernel behind
// one kernel interface (driver/kmd/kmd.h), the matmul runner over it (lib/matmul/run.h).
// Weights live in device buffers in the native layout; a call runs as the runner's call or,
// submitted, as a matmul job (lib/matmul/job.h; the job halves in job_api.cpp, batch.cpp).
#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "driver/emu/kernel/fake_kernel.h"
#include "lib/api/backend.h"
#include "lib/api/batch.h"
#include "lib/api/buffer.h"
#include "lib/api/device.h"
#include "lib/api/error.h"
#include "lib/api/job_queue.h"
#include "lib/api/matmul_t.h"
#include "lib/api/stats.h"
#include "lib/api/weights.h"
#include "lib/exec/board_plan.h"
#include "lib/matmul/layout.h"
#include "lib/matmul/layout_source.h"

namespace ork::api {

// The board plan prices a stacked plan against the plain ones on the timing model, so the
// C API stacks exactly where the executor would: one chooser.
Result<matmul::Plan> npu_call_plan(const matmul::ResidentWeights& w, int64_t m, const matmul::RunOptions& o) {
  if (w.dtype() != matmul::DType::int4 || o.mc_cap != 0) return matmul::plan_call(w, m, o);
  const int cores = std::popcount(matmul::effective_core_mask(o));
  return exec::plan_alone(w.dtype(), m, w.k(), w.n(), cores, w.slice_k());
}

namespace {

class NpuBackend final : public Backend {
 public:
  NpuBackend(std::unique_ptr<driver::Kmd> kmd, const emu::FakeKernel* fake, size_t context_bytes)
      : kmd_(std::move(kmd)), fake_(fake), runner_(std::make_unique<matmul::MatmulRunner>(*kmd_, context_bytes)) {
    runner_->set_plan_chooser(npu_call_plan);
  }
  // The runner's contexts hold BOs: they go before the kernel interface.
  ~NpuBackend() override { runner_.reset(); }

  driver::Kmd* kmd() const override { return kmd_.get(); }
  matmul::MatmulRunner* runner() const override { return runner_.get(); }
  exec::DeviceRef exec_device(int cores) const override { return exec::DeviceRef::npu(*kmd_, *runner_, cores); }
  uint64_t context_evictions() const override { return runner_->cache_stats().evictions; }

  ork_status make_buffer(ork_buffer& b, const char* fn) override;
  Status sync_buffer(const ork_buffer& b, bool start, bool write) const override {
    return kmd_->dmabuf_sync(*b.bo, start, write);
  }
  ork_status export_buffer(const ork_buffer& b, int* fd, const char* fn) const override;
  ork_status import_buffer(ork_buffer& b, int fd, const char* fn) override;

  Result<std::unique_ptr<quant::QuantMatmul>> make_quant(quant::QuantWeights q) override {
    return quant::QuantMatmul::create_npu(*kmd_, std::move(q));
  }
  Status run_quant(quant::QuantMatmul& q, std::span<const float> a, int64_t m, std::span<float> c,
                   const quant::QRunOptions& ro, CallMeter&) override {
    return q.run(a, m, c, ro);  // the runner's figures go to ro.stats, the meter's
  }

  void describe(ork_device_info& info) const override;
  void memory(const ork_device& d, uint64_t host_free, ork_memory_info& m) const override;

  ork_status make_weights(ork_weights& w, const void* data) override {
    auto r = matmul::ResidentWeights::create(*kmd_, internal_dtype(w.dtype), w.k, w.n, data);
    if (!r) return fail(r.error());
    w.resident = std::move(*r);
    if (w.dtype == ORK_DTYPE_INT4) {  // kept for the w4a8 copy (weights.h)
      const auto* p = static_cast<const uint8_t*>(data);
      w.packed.assign(p, p + matmul::int4_packed_bytes(w.k * w.n));
    }
    return ok();
  }

  ork_status make_weights_from(ork_weights& w, const matmul::WeightSource& src) override {
    if (w.dtype == ORK_DTYPE_INT4) {  // the K x N stream first: packed at its own slice width
      const std::vector<uint8_t> stream = int4_stream_from(w, src);
      return make_weights(w, stream.data());
    }
    auto r = matmul::ResidentWeights::create_with(
        *kmd_, internal_dtype(w.dtype), w.k, w.n,
        [&](const matmul::Plan& plan, std::span<uint8_t> out) { return matmul::pack_b_source(plan, src, out); });
    if (!r) return fail(r.error());
    w.resident = std::move(*r);
    return ok();
  }

  ork_status import_weights(ork_weights& w, const matmul::Plan& plan, std::span<const uint8_t> payload) override;

  void forget(ork_weights& w) override {
    if (w.resident) runner_->forget(*w.resident);
    if (w.resident_w4a8) runner_->forget(*w.resident_w4a8);
  }

  ork_status multiply(const ork_weights& w, const CallTypes& t, const void*, int64_t, void*, const ork_matmul_options&,
                      const matmul::RunOptions&, CallMeter&) override;
  ork_status submit(const ork_weights& w, TensorCall& t, ork_job& job) override;
  ork_status submit_batch(ork_batch& b, ork_job& job) override { return submit_npu_batch(*kmd_, b, job); }

 private:
  std::unique_ptr<driver::Kmd> kmd_;
  const emu::FakeKernel* fake_;
  std::unique_ptr<matmul::MatmulRunner> runner_;
};

// A buffer is a BO of the kernel interface, zeroed (docs/library.md "Buffers and tensors").
ork_status NpuBackend::make_buffer(ork_buffer& b, const char* fn) {
  auto bo = kmd_->bo_create(b.bytes, driver::BoUsage::data);
  if (!bo) return fail(bo.error().code == -ENOMEM ? ORK_E_NO_MEMORY : ORK_E_DEVICE,
                       fmt::format("{}: {} bytes: {}", fn, b.bytes, bo.error().message));
  b.bo = std::move(*bo);
  std::memset(b.bo->map(), 0, b.bo->size());
  return ORK_OK;
}

ork_status NpuBackend::export_buffer(const ork_buffer& b, int* fd, const char* fn) const {
  auto r = kmd_->bo_export(*b.bo);
  if (!r) return fail(ORK_E_DEVICE, fmt::format("{}: {}", fn, r.error().message));
  *fd = *r;
  return ok();
}

ork_status NpuBackend::import_buffer(ork_buffer& b, int fd, const char* fn) {
  auto bo = kmd_->bo_import(fd, b.bytes);
  if (!bo) {
    const int code = bo.error().code;
    const ork_status st = code == -EBADF || code == -EINVAL || code == -EEXIST ? ORK_E_INVALID_ARGUMENT
                          : code == -ENOMEM                                    ? ORK_E_NO_MEMORY
                                                                               : ORK_E_DEVICE;
    return fail(st, fmt::format("{}: fd {}: {}", fn, fd, bo.error().message));
  }
  b.bo = std::move(*bo);
  return ok();
}

void NpuBackend::describe(ork_device_info& info) const {
  const driver::DeviceInfo& k = kmd_->info();
  copy_str(info.kernel_interface, driver::kmd_kind_name(k.kind));
  copy_str(info.node, k.node);
  copy_str(info.driver_version, k.driver_version);
  info.hw_version = k.hw_version;
  info.cores = k.cores;
  info.emulated = k.emulated ? 1 : 0;
}

void NpuBackend::memory(const ork_device&, uint64_t host_free, ork_memory_info& m) const {
  driver::WindowInfo w = kmd_->estimate_window();
  if (fake_) {  // the fake kernel knows its window: the real free bytes and largest gap
    if (auto u = fake_->window_usage(kmd_->node_fd())) {
      w.window_bytes = u->window_bytes;
      w.free_bytes = u->window_bytes - u->used_bytes;
      w.largest_free_bytes = u->largest_free;
      w.exact = true;
    }
  }
  m.exact = w.exact ? 1 : 0;
  m.bytes_resident = w.resident_bytes;
  m.window_bytes = w.window_bytes;
  m.window_free_bytes = w.free_bytes;
  m.largest_allocation_bytes = host_free ? std::min(w.largest_free_bytes, host_free) : w.largest_free_bytes;
  const auto c = runner_->cache_stats();
  m.context_bytes = c.bytes;
  m.context_capacity_bytes = c.capacity;
}

ork_status NpuBackend::import_weights(ork_weights& w, const matmul::Plan& plan, std::span<const uint8_t> payload) {
  std::vector<uint8_t> dense;  // int4: the K x N stream the w4a8 copy is made from
  if (w.dtype == ORK_DTYPE_INT4) {
    dense.resize(static_cast<size_t>(matmul::int4_packed_bytes(w.k * w.n)));
    if (auto s = matmul::unpack_b_native(plan, payload, dense); !s) return fail(s.error());
    return make_weights(w, dense.data());  // repacked at the weights' own slice width
  }
  auto r = matmul::ResidentWeights::create_with(*kmd_, internal_dtype(w.dtype), w.k, w.n,
                                                [&](const matmul::Plan&, std::span<uint8_t> out) {
                                                  std::memcpy(out.data(), payload.data(), payload.size());
                                                  return Status::success();
                                                });
  if (!r) return fail(r.error());
  w.resident = std::move(*r);
  if (w.dtype == ORK_DTYPE_INT4) w.packed = std::move(dense);
  return ok();
}

ork_status NpuBackend::multiply(const ork_weights& w, const CallTypes& t, const void* a, int64_t m, void* c,
                                const ork_matmul_options& o, const matmul::RunOptions& run, CallMeter& meter) {
  const matmul::OwnedWeights* rw = nullptr;
  matmul::RunOptions ro;
  if (auto st = npu_call(*kmd_, w, t, o, run, &rw, &ro); st != ORK_OK) return st;
  if (auto s = runner_->run(rw->ref(), a, m, c, ro, &meter.run); !s) return fail(s.error());
  return ok();
}

ork_status NpuBackend::submit(const ork_weights& w, TensorCall& t, ork_job& job) {
  const matmul::OwnedWeights* rw = nullptr;
  matmul::RunOptions ro;
  if (auto s = npu_call(*kmd_, w, t.types, t.opt, t.run, &rw, &ro); s != ORK_OK) return s;
  return submit_npu_call(*kmd_, *runner_, rw->ref(), ro, t, job);
}

}  // namespace

ork_status npu_call(driver::Kmd& kmd, const ork_weights& w, const CallTypes& t, const ork_matmul_options& o,
                    const matmul::RunOptions& run, const matmul::OwnedWeights** rw_out, matmul::RunOptions* ro_out) {
  const matmul::OwnedWeights* rw = &w.resident;
  if (t.a != enum_value(w.dtype)) {  // w4a8 (int4 weights' second A, the dtype table): the int8-wide copy
    if (!w.resident_w4a8) {
      auto r = matmul::ResidentWeights::create_w4a8(kmd, w.k, w.n, w.packed.data());
      if (!r) return fail(r.error());
      w.resident_w4a8 = std::move(*r);
    }
    rw = &w.resident_w4a8;
  }
  *ro_out = run;
  ro_out->mc_cap = o.mc_cap;
  ro_out->fp16_out = t.c == ORK_DTYPE_FP16;
  *rw_out = rw;
  return ORK_OK;
}

std::unique_ptr<Backend> make_npu_backend(std::unique_ptr<driver::Kmd> kmd, const emu::FakeKernel* fake,
                                          size_t context_bytes) {
  return std::make_unique<NpuBackend>(std::move(kmd), fake, context_bytes);
}

}  // namespace ork::api
