// Opening a device by backend name (architecture.md section 2).
#include "lib/api/device.h"

#include <cstdlib>
#include <cstring>
#include <string_view>

#include <fmt/format.h>

#include "driver/emu/kernel/fake_kernel.h"
#include "driver/emu/npu/core.h"
#include "driver/emu/npu/timeline.h"
#include "driver/os/os.h"
#include "lib/ref/fast.h"

ork_device::~ork_device() {
  runner.reset();  // contexts hold BOs: release them before the kernel interface
  kmd.reset();
  fake.reset();
}

namespace ork::api {
namespace {

template <size_t N>
void copy_str(char (&dst)[N], std::string_view src) {
  const size_t n = std::min(src.size(), N - 1);
  std::memcpy(dst, src.data(), n);
  dst[n] = '\0';
}

void fill_info(ork_device& d) {
  copy_str(d.info.backend, d.backend);
  if (!d.kmd) {
    d.info.cores = 1;
    return;
  }
  const driver::DeviceInfo& k = d.kmd->info();
  copy_str(d.info.kernel_interface, driver::kmd_kind_name(k.kind));
  copy_str(d.info.node, k.node);
  copy_str(d.info.driver_version, k.driver_version);
  d.info.hw_version = k.hw_version;
  d.info.cores = k.cores;
  d.info.emulated = k.emulated ? 1 : 0;
}

Result<std::unique_ptr<ork_device>> finish(std::unique_ptr<ork_device> d) {
  if (d->kmd) d->runner = std::make_unique<matmul::MatmulRunner>(*d->kmd);
  fill_info(*d);
  return d;
}

// The emulated NPU's integer multiply, lent from the CPU reference's fast path (exact: the
// emulator's results cannot change, only its speed; driver/emu/npu/core.h).
void fast_int8_gemm(const int8_t* a, const int8_t* b, int32_t* c, size_t mc, size_t kt, size_t cols) {
  const ref::Dims d{static_cast<int64_t>(mc), static_cast<int64_t>(kt), static_cast<int64_t>(cols)};
  auto s = ref::matmul_int8_fast({a, mc * kt}, {b, kt * cols}, {c, mc * cols}, d, {.threads = 1, .isa = {}});
  if (!s) std::abort();  // sizes are consistent by construction: a failure here is a bug
}

// "emu", "emu-rknpu", "emu-rocket": the unchanged kernel-interface code over the fake kernel.
Result<std::unique_ptr<ork_device>> open_emu(driver::KmdKind kind) {
  emu::lend_int8_gemm(&fast_int8_gemm);
  auto d = std::make_unique<ork_device>();
  d->backend = "emu";
  // The cache model is on: cached BOs get an NPU-side copy that only the sync ioctls
  // update, so a missing sync in libork computes with stale data here, as on silicon.
  auto timed = emu::timed_from_env();  // ORK_EMU_TIMING=fast|timed (docs/timing-model.md)
  if (!timed) return timed.error();
  d->fake = std::make_unique<emu::FakeKernel>(emu::FakeKernelConfig{
      .timing = *timed ? emu::TimingMode::timed : emu::TimingMode::fast, .model_caches = true});
  auto kmd = driver::discover(*d->fake, kind);
  if (!kmd) return kmd.error();
  d->kmd = std::move(*kmd);
  return finish(std::move(d));
}

Result<std::unique_ptr<ork_device>> open_real(std::optional<driver::KmdKind> kind,
                                              const std::string& node) {
  auto kmd = driver::discover(driver::real_os(), kind, node);
  if (!kmd) return kmd.error();
  auto d = std::make_unique<ork_device>();
  d->backend = driver::kmd_kind_name((*kmd)->info().kind);
  d->kmd = std::move(*kmd);
  return finish(std::move(d));
}

}  // namespace

Result<std::unique_ptr<ork_device>> open_device(const char* name_or_null) {
  std::string name = name_or_null ? name_or_null : "default";
  if (name == "default" || name.empty()) {
    const char* env = std::getenv("ORK_DEVICE");
    name = (env && *env) ? env : "auto";
  }
  // An optional ":NODE" names the device node (card vs render node matters on rknpu).
  std::string node;
  if (auto colon = name.find(':'); colon != std::string::npos) {
    node = name.substr(colon + 1);
    name = name.substr(0, colon);
  }
  if (name == "cpu") {
    auto d = std::make_unique<ork_device>();
    d->backend = "cpu";
    return finish(std::move(d));
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
                                         "emu, emu-rknpu, emu-rocket, cpu or auto", name));
}

}  // namespace ork::api
