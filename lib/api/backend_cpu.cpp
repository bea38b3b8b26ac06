// The cpu device's backend (backend.h): the CPU reference's kernel of each dtype (the dtype
// table, lib/matmul/dtype.h), chosen so that it returns the NPU's bytes (docs/cpu-reference.md).
// No device memory: weights are host memory in the kernels' form, counted in the device's
// bytes_resident; a job runs at its submit and is born complete.
#include <bit>
#include <chrono>
#include <new>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "lib/api/backend.h"
#include "lib/api/batch.h"
#include "lib/api/buffer.h"
#include "lib/api/device.h"
#include "lib/api/error.h"
#include "lib/api/job_queue.h"
#include "lib/api/matmul_t.h"
#include "lib/api/stats.h"
#include "lib/api/weights.h"
#include "lib/matmul/layout_source.h"

namespace ork::api {
namespace {

class CpuBackend final : public Backend {
 public:
  explicit CpuBackend(ork_device& device) : device_(device) {}

  exec::DeviceRef exec_device(int cores) const override { return exec::DeviceRef::cpu(cores); }

  // Buffers are zeroed host memory: no kernel interface, so no dma-buf to share.
  ork_status make_buffer(ork_buffer& b, const char* fn) override {
    b.host.reset(new (std::nothrow) uint8_t[b.bytes]());
    if (!b.host) return fail(ORK_E_NO_MEMORY, fmt::format("{}: {} bytes: out of host memory", fn, b.bytes));
    return ORK_OK;
  }
  Status sync_buffer(const ork_buffer&, bool, bool) const override { return {}; }  // the CPU's own memory
  ork_status export_buffer(const ork_buffer&, int*, const char* fn) const override { return no_dmabuf(fn, "export a dma-buf from"); }
  ork_status import_buffer(ork_buffer&, int, const char* fn) override { return no_dmabuf(fn, "import a dma-buf into"); }

  Result<std::unique_ptr<quant::QuantMatmul>> make_quant(quant::QuantWeights q) override {
    return quant::QuantMatmul::create_cpu(std::move(q));
  }
  // The quantised path runs on the host (lib/quant): the whole run is the device's time.
  Status run_quant(quant::QuantMatmul& q, std::span<const float> a, int64_t m, std::span<float> c,
                   const quant::QRunOptions& ro, CallMeter& meter) override {
    const auto t0 = std::chrono::steady_clock::now();
    Status s = q.run(a, m, c, ro);
    if (!s) return s;
    meter.cpu_threads = static_cast<uint64_t>(meter.run.cpu_threads);
    meter.host_device_ns =
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
    return s;
  }

  void describe(ork_device_info& info) const override {
    // Every option an NPU device takes (docs/cpu-reference.md): cores 1..3 as on the RK3588,
    // each core one host thread of the int8 paths.
    info.cores = matmul::kMaxCores;
  }

  void memory(const ork_device& d, uint64_t host_free, ork_memory_info& m) const override {
    m.exact = 1;  // no device memory, no window
    m.bytes_resident = static_cast<uint64_t>(std::max<int64_t>(d.host_weight_bytes.load(), 0));
    m.largest_allocation_bytes = host_free;
  }

  ork_status make_weights(ork_weights& w, const void* data) override {
    auto host = dtype_row(w.dtype).host_weights(w.k, w.n, data);
    if (!host) return fail(host.error());
    w.host = std::move(*host);
    return count(w);
  }

  ork_status make_weights_from(ork_weights& w, const matmul::WeightSource& src) override {
    if (auto s = host_weights_from(w, src); s != ORK_OK) return s;
    return count(w);
  }

  ork_status import_weights(ork_weights& w, const matmul::Plan& plan, std::span<const uint8_t> payload) override {
    std::vector<uint8_t> dense(static_cast<size_t>((w.k * w.n * dtype_row(w.dtype).bits + 7) / 8));  // K x N values
    if (auto s = matmul::unpack_b_native(plan, payload, dense); !s) return fail(s.error());
    return make_weights(w, dense.data());
  }

  void forget(ork_weights& w) override {
    if (w.host_bytes) add_host_weight_bytes(device_, -w.host_bytes);
  }

  ork_status multiply(const ork_weights& w, const CallTypes& t, const void* a, int64_t m, void* c,
                      const ork_matmul_options& o, const matmul::RunOptions&, CallMeter& meter) override {
    const auto t0 = std::chrono::steady_clock::now();
    // `cores` (or a core_mask's bit count) as host threads, 0: as many as the shape needs,
    // up to the machine's. The thread count never changes a byte (lib/matmul/cpu_matmul.h).
    int threads = 1;
    const matmul::CpuCall call{.a = a, .m = m, .c = c, .a_code = t.a, .c_code = t.c,
                               .threads = o.core_mask != 0 ? std::popcount(o.core_mask) : o.cores,
                               .threads_used = &threads};
    const Status s = dtype_row(w.dtype).cpu(w.host, call);
    meter.cpu_threads = static_cast<uint64_t>(threads);
    meter.host_device_ns =
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
    if (!s) return fail(s.error());
    return ok();
  }

  ork_status submit(const ork_weights& w, TensorCall& t, ork_job& job) override {
    const ork_status run = multiply(w, t.types, t.a, t.m, t.c, t.opt, t.run, *job.meter);
    if (auto s = finish_tensor_call(t, run); s != ORK_OK) return s;
    job.meter->finish(job.stats_out);
    job.meter.reset();
    job.state = JobState::done;
    return ORK_OK;
  }

  ork_status submit_batch(ork_batch& b, ork_job& job) override {
    for (const BatchItem& it : b.items) {  // every matmul now, one after the other
      std::vector<uint8_t> a_scratch;
      JobStep s;
      s.c_op = it.c_op;
      s.c_ref = it.c_ref;
      s.c = output_target(s.c_ref, s.c_op, s.c_scratch);
      const void* a = dense_input(it.a_ref, it.a_op, a_scratch);
      if (auto st = multiply(*it.weights, it.types, a, it.m, s.c, it.opt, it.run, *job.meter); st != ORK_OK) return st;
      scatter_output(s.c_ref, s.c_op, s.c_scratch);
    }
    job.meter->finish(nullptr);
    job.meter.reset();
    job.state = JobState::done;
    return ORK_OK;
  }

 private:
  ork_status no_dmabuf(const char* fn, const char* what) const {
    return fail(ORK_E_UNSUPPORTED, fmt::format("{}: the {} backend has no kernel interface to {}", fn, device_.name, what));
  }
  // Counted in the device's bytes_resident (forget subtracts).
  ork_status count(ork_weights& w) {
    w.host_bytes = w.host.bytes();
    add_host_weight_bytes(device_, w.host_bytes);
    return ok();
  }

  ork_device& device_;
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend(ork_device& device) { return std::make_unique<CpuBackend>(device); }

}  // namespace ork::api
