// Opening a device by backend name (README.md "Devices"; docs/kernel-interfaces.md).
#include "lib/api/device.h"
#include "lib/api/job_queue.h"

#include <cstdlib>
#include <cstring>
#include <string_view>

#include <fmt/format.h>

#include "driver/common/cpu_features.h"
#include "driver/common/env.h"
#include "driver/common/echo.h"
#include "driver/emu/kernel/fake_kernel.h"
#include "driver/emu/npu/core.h"
#include "driver/emu/npu/weight_cache.h"
#include "driver/emu/npu/timeline.h"
#include "driver/os/os.h"
#include "lib/ref/fast.h"

ork_device::~ork_device() {
  if (jobs) jobs->close();  // in-flight jobs end on the device before its BOs go
  jobs.reset();
  backend.reset();  // its runner's contexts and the weights' BOs go before the kernel interface
  fake.reset();
}

namespace ork::api {

JobQueue& jobs_of(ork_device& device) {
  if (!device.jobs) device.jobs.reset(new JobQueue(device));
  return *device.jobs;
}

namespace {

// The device with its backend: its facts filled in.
std::unique_ptr<ork_device> finish(std::unique_ptr<ork_device> d, std::unique_ptr<Backend> backend) {
  d->backend = std::move(backend);
  copy_str(d->info.backend, d->name);
  d->backend->describe(d->info);
  return d;
}

// An NPU device over `kmd` (the real kernel's or the fake kernel's interface).
Result<std::unique_ptr<ork_device>> finish_npu(std::unique_ptr<ork_device> d, std::unique_ptr<driver::Kmd> kmd) {
  // The context cache's bound (docs/library.md "Contexts and their bound").
  auto bytes = env_bytes("ORK_CONTEXT_CACHE_BYTES", matmul::MatmulRunner::default_context_bytes());
  if (!bytes) {
    kmd.reset();  // the kernel interface closes before the fake kernel under it (d's) goes
    return bytes.error();
  }
  auto backend = make_npu_backend(std::move(kmd), d->fake.get(), static_cast<size_t>(*bytes));
  return finish(std::move(d), std::move(backend));
}

// The emulated NPU's integer multiply, lent from the CPU reference's fast path (exact: the
// emulator's results cannot change, only its speed; driver/emu/npu/core.h). Weight blocks
// are packed once (the emulator keeps them across M-tiles and calls); the multiply may use
// every host thread, as the fast path does for a shape this size.
struct PackedWeights final : emu::PreparedInt8 {
  explicit PackedWeights(ref::PackedB b) : packed(std::move(b)) {}
  ref::PackedB packed;
  size_t bytes() const override { return packed.bytes(); }
};

class FastEngine final : public emu::Int8Engine {
 public:
  std::shared_ptr<const emu::PreparedInt8> prepare(const int8_t* bt, size_t kt, size_t cols) const override {
    auto b = ref::pack_b_int8({bt, kt * cols}, static_cast<int64_t>(kt), static_cast<int64_t>(cols),
                              ref::BOrder::column_major);
    if (!b) std::abort();  // sizes are consistent by construction: a failure here is a bug
    return std::make_shared<PackedWeights>(std::move(*b));
  }
  void multiply(const int8_t* a, size_t mc, const emu::PreparedInt8& b, const emu::Int32Out& c) const override {
    const ref::PackedB& w = static_cast<const PackedWeights&>(b).packed;
    const ref::CLayout out{c.base, static_cast<int64_t>(c.row_stride), static_cast<int64_t>(c.group),
                           static_cast<int64_t>(c.group_stride)};
    if (!ref::matmul_int8_packed({a, mc * static_cast<size_t>(w.k())}, static_cast<int64_t>(mc), w, out)) std::abort();
  }
};

// An emulated device; an `engine` given is the device's own (config.int8_engine points at it).
Result<std::unique_ptr<ork_device>> open_emulator_owning(driver::KmdKind kind, const emu::FakeKernelConfig& config,
                                                         std::unique_ptr<const emu::Int8Engine> engine) {
  auto d = std::make_unique<ork_device>();
  d->name = "emu";
  emu::FakeKernelConfig own = config;
  if (engine) own.int8_engine = engine.get();
  d->int8_engine = std::move(engine);
  d->fake = std::make_unique<emu::FakeKernel>(own);
  // ORK_EMU_FAULTS (docs/emulator.md "Injected faults"): set before discovery, so that a
  // rule can hit the device's first ioctls too.
  auto rules = emu::faults_from_env();
  if (!rules) return rules.error();
  d->fake->faults().rules = std::move(*rules);
  auto kmd = driver::discover(*d->fake, kind);
  if (!kmd) return kmd.error();
  return finish_npu(std::move(d), std::move(*kmd));
}

// "emu", "emu-rknpu", "emu-rocket": the unchanged kernel-interface code over the fake kernel,
// with the device's own integer engine.
Result<std::unique_ptr<ork_device>> open_emu(driver::KmdKind kind) {
  // The cache model is on: cached BOs get an NPU-side copy that only the sync ioctls
  // update, so a missing sync in libork computes with stale data here, as on silicon.
  auto timed = emu::timed_from_env();  // ORK_EMU_TIMING=fast|timed (docs/timing-model.md)
  if (!timed) return timed.error();
  auto keep = emu::weight_cache_from_env();  // ORK_EMU_WEIGHT_CACHE=on|off (docs/emulator.md)
  if (!keep) return keep.error();
  auto cache_bytes = emu::weight_cache_bytes_from_env();  // its bound (docs/emulator.md)
  if (!cache_bytes) return cache_bytes.error();
  auto regs = emu::register_mode_from_env();  // ORK_EMU_REGS=keep|adversarial (docs/emulator.md)
  if (!regs) return regs.error();
  auto window = emu::window_bytes_from_env();  // ORK_EMU_WINDOW: a smaller window, for tests (docs/emulator.md)
  if (!window) return window.error();
  const emu::FakeKernelConfig config{.timing = *timed ? emu::TimingMode::timed : emu::TimingMode::fast,
                                     .model_caches = true,
                                     .keep_prepared_weights = *keep,
                                     .weight_cache_bytes = static_cast<size_t>(*cache_bytes),
                                     .registers = *regs,
                                     .window_bytes = *window};
  return open_emulator_owning(kind, config, std::make_unique<FastEngine>());
}

}  // namespace

Result<std::unique_ptr<ork_device>> open_emulator(driver::KmdKind kind, const emu::FakeKernelConfig& config) {
  if (Status tier = cpu::cpu_tier_status(); !tier) return tier.error();  // ORK_CPU_TIER (cpu_features.h)
  return open_emulator_owning(kind, config, nullptr);
}

namespace {

Result<std::unique_ptr<ork_device>> open_real(std::optional<driver::KmdKind> kind,
                                              const std::string& node) {
  auto kmd = driver::discover(driver::real_os(), kind, node);
  if (!kmd) return kmd.error();
  auto d = std::make_unique<ork_device>();
  d->name = driver::kmd_kind_name((*kmd)->info().kind);
  return finish_npu(std::move(d), std::move(*kmd));
}

}  // namespace

ork_device* retain(ork_device* device) {
  if (device != nullptr) device->refs.fetch_add(1, std::memory_order_relaxed);
  return device;
}

void release(ork_device* device) {
  if (device != nullptr && device->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete device;
}

exec::DeviceRef exec_device(const ork_device& device, int cores) {
  return device.backend->exec_device(std::min(cores, device.info.cores));
}

std::string resolve_device_name(const char* name_or_null) {
  const std::string name = name_or_null ? name_or_null : "default";
  if (name != "default" && !name.empty()) return name;
  const char* env = std::getenv("ORK_DEVICE");
  return (env && *env) ? env : "auto";
}

Result<std::unique_ptr<ork_device>> open_device(const char* name_or_null) {
  // "" is not NULL: an empty name is refused, never taken for the default (ork.h).
  if (name_or_null != nullptr && *name_or_null == '\0')
    return make_error(-EINVAL, "device name is empty: pass NULL (or \"default\") for $ORK_DEVICE, else auto");
  // ORK_CPU_TIER (driver/common/cpu_features.h): every device's host kernels take its tier.
  if (Status tier = cpu::cpu_tier_status(); !tier) return tier.error();
  std::string name = resolve_device_name(name_or_null);
  // An optional ":NODE" names the device node (card vs render node matters on rknpu); only
  // the kernel interfaces have one ("emu:foo" was once emu, the ":foo" ignored).
  std::string node;
  if (auto colon = name.find(':'); colon != std::string::npos) {
    node = name.substr(colon + 1);
    name = name.substr(0, colon);
    if (node.empty() || name == "cpu" || name == "emu" || name == "emu-rknpu" || name == "emu-rocket")
      return make_error(-EINVAL, fmt::format("device '{}': {}", echo_capped(name + ":" + node),
                                             node.empty() ? "an empty :NODE" : "only rknpu, rocket and auto take a :NODE"));
  }
  if (name == "cpu") {
    auto d = std::make_unique<ork_device>();
    d->name = "cpu";
    auto backend = make_cpu_backend(*d);
    return finish(std::move(d), std::move(backend));
  }
  if (name == "emu" || name == "emu-rknpu") return open_emu(driver::KmdKind::rknpu);
  if (name == "emu-rocket") return open_emu(driver::KmdKind::rocket);
  if (name == "rknpu") return open_real(driver::KmdKind::rknpu, node);
  if (name == "rocket") return open_real(driver::KmdKind::rocket, node);
  if (name == "auto") {
    auto real = open_real(std::nullopt, node);
    if (real) return real;
    return open_emu(driver::KmdKind::rknpu);
  }
  return make_error(-EINVAL, fmt::format("unknown device '{}': expected rknpu[:NODE], rocket[:NODE], "
                                         "emu, emu-rknpu, emu-rocket, cpu or auto", echo_capped(name)));
}

}  // namespace ork::api
