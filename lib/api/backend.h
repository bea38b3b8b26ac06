// What a device computes with: one backend object per ork_device, one implementation per
// kind, as Intel's linux-npu-driver and AMD's xdna-driver shape their device classes
// (docs/library.md "Devices and their backends"). NpuBackend (backend_npu.cpp) drives the
// NPU through a kernel interface, over the real kernel or the emulator's fake one;
// CpuBackend (backend_cpu.cpp) runs the CPU reference's kernel of each dtype (the dtype
// table, lib/matmul/dtype.h). The C API's entry points check, lock the device once and hand
// the work to the backend; none of them asks which kind it is.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "driver/kmd/kmd.h"
#include "lib/exec/executor.h"
#include "lib/matmul/layout_source.h"
#include "lib/matmul/run.h"
#include "lib/quant/qmatmul.h"
#include "ork/ork.h"

struct ork_buffer;
struct ork_device;
struct ork_weights;
struct ork_job;
struct ork_batch;

namespace ork::emu {
class FakeKernel;
}

namespace ork::api {

class CallMeter;
struct TensorCall;

// The A and C dtypes of one call after defaults, resolved once (call_dtypes, weights.h).
struct CallTypes {
  int32_t a = 0, c = 0;
};

// Every call runs with the device's mutex held (device.h).
class Backend {
 public:
  virtual ~Backend() = default;

  // The kernel interface and matmul runner of an NPU backend, nullptr on the CPU: for the
  // tools and tests that drive lib/matmul on them directly (mc_prof). Inside the library
  // nothing asks for them: what needs the kernel interface is a method below, and the
  // device's kind is the backend's, never inferred from a null kernel interface.
  virtual driver::Kmd* kmd() const { return nullptr; }
  virtual matmul::MatmulRunner* runner() const { return nullptr; }

  // The device as lib/exec drives it (streamed models: ork_session, ork_run), `cores` at
  // most the device's: an NPU's kernel interface and runner, or the cpu.
  virtual exec::DeviceRef exec_device(int cores) const = 0;
  // Contexts the runner's cache has evicted so far (the call statistics); 0 on the CPU.
  virtual uint64_t context_evictions() const { return 0; }

  // Device buffers (buffer.cpp; `fn` names the entry point in errors). make_buffer: `b`'s
  // memory, b.bytes zeroed bytes (a BO on an NPU, host memory on the CPU).
  // sync_buffer: a dma-buf's CPU-access bracket (DMA_BUF_IOCTL_SYNC START / END) of a buffer
  // with a BO. import_buffer: `b`'s memory is the dma-buf `fd`, b.bytes long.
  virtual ork_status make_buffer(ork_buffer& b, const char* fn) = 0;
  virtual Status sync_buffer(const ork_buffer& b, bool start, bool write) const = 0;
  virtual ork_status export_buffer(const ork_buffer& b, int* fd, const char* fn) const = 0;
  virtual ork_status import_buffer(ork_buffer& b, int fd, const char* fn) = 0;

  // Quantised weights (quant_api.cpp): their groups resident on the NPU, or the CPU's; a
  // quantised matmul on them, its figures to `meter`.
  virtual Result<std::unique_ptr<quant::QuantMatmul>> make_quant(quant::QuantWeights q) = 0;
  virtual Status run_quant(quant::QuantMatmul& q, std::span<const float> a, int64_t m, std::span<float> c,
                           const quant::QRunOptions& ro, CallMeter& meter) = 0;

  // The device's facts for ork_device_get_info (backend name filled by the device).
  virtual void describe(ork_device_info& info) const = 0;
  // ork_device_memory's figures; `host_free`: the host's available bytes.
  virtual void memory(const ork_device& device, uint64_t host_free, ork_memory_info& m) const = 0;

  // Weights (w.device, dtype, k, n set): from dense K x N data, from an engine layout, from a
  // packed blob's payload (the native layout of `plan`).
  virtual ork_status make_weights(ork_weights& w, const void* data) = 0;
  virtual ork_status make_weights_from(ork_weights& w, const matmul::WeightSource& src) = 0;
  virtual ork_status import_weights(ork_weights& w, const matmul::Plan& plan, std::span<const uint8_t> payload) = 0;
  // The weights are going: what the backend keeps of them goes too.
  virtual void forget(ork_weights& w) = 0;

  // One matmul of dense A and C, its options checked (`run`: cores and mask) and its types
  // resolved; the figures go to `meter`.
  virtual ork_status multiply(const ork_weights& w, const CallTypes& types, const void* a, int64_t m, void* c,
                              const ork_matmul_options& o, const matmul::RunOptions& run, CallMeter& meter) = 0;
  // The call of `t` as the job `job` (ork_matmul_submit): handed to the NPU, or run now and
  // born complete. On success `t`'s C belongs to the job.
  virtual ork_status submit(const ork_weights& w, TensorCall& t, ork_job& job) = 0;
  // Every matmul of the batch as the job `job` (ork_batch_submit).
  virtual ork_status submit_batch(ork_batch& b, ork_job& job) = 0;
};

// The two kinds. `fake`: the emulated NPU under `kmd`, when it is one (its window usage is
// exact); `context_bytes`: the runner's context cache bound.
std::unique_ptr<Backend> make_npu_backend(std::unique_ptr<driver::Kmd> kmd, const emu::FakeKernel* fake,
                                          size_t context_bytes);
std::unique_ptr<Backend> make_cpu_backend(ork_device& device);

// The NPU backend's pieces (the caller holds the device's mutex): the resident weights and
// runner options of a call, the w4a8 copy made on its first use (backend_npu.cpp): `rw` is the
// handle's, with its id, so the runner finds a cached context without reading the weights
// object; the call handed to the NPU as a matmul job (job_api.cpp); a batch as one matmul job
// (batch.cpp).
ork_status npu_call(driver::Kmd& kmd, const ork_weights& w, const CallTypes& types, const ork_matmul_options& o,
                    const matmul::RunOptions& run, const matmul::OwnedWeights** rw, matmul::RunOptions* ro);
ork_status submit_npu_call(driver::Kmd& kmd, matmul::MatmulRunner& runner, matmul::WeightsRef rw,
                           const matmul::RunOptions& ro, TensorCall& t, ork_job& job);
ork_status submit_npu_batch(driver::Kmd& kmd, ork_batch& b, ork_job& job);
// A call's plan on an NPU (the runner's chooser; a batch's contexts): an int4 call takes the
// board plan's of the matmul alone (lib/exec/board_plan.h plan_alone), stacked where it
// stacks; other dtypes, and a call that caps its rows, the runner's (matmul::plan_call).
Result<matmul::Plan> npu_call_plan(const matmul::ResidentWeights& w, int64_t m, const matmul::RunOptions& o);

// The device as lib/exec drives it (Backend::exec_device), `cores` at most the device's.
exec::DeviceRef exec_device(const ork_device& device, int cores);

}  // namespace ork::api
