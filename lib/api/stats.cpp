// The counters and the memory query (stats.h).
#include "lib/api/stats.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#include <fmt/format.h>

#include "driver/emu/kernel/fake_kernel.h"
#include "driver/emu/npu/weight_cache.h"
#include "lib/api/device.h"
#include "lib/api/error.h"

namespace ork::api {
namespace {

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

uint64_t nonneg(int64_t v) { return v > 0 ? static_cast<uint64_t>(v) : 0; }

// Every counter of `b` added to `a` (struct_size and reserved left alone).
void accumulate(ork_stats& a, const ork_stats& b) {
  uint64_t* const dst = &a.calls;
  const uint64_t* const src = &b.calls;
  constexpr size_t kCounters = (sizeof(ork_stats) - offsetof(ork_stats, calls)) / sizeof(uint64_t);
  for (size_t i = 0; i < kCounters; ++i) dst[i] += src[i];
}

uint64_t available_host_bytes() {
  const long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : 0;
}

}  // namespace

void DeviceStats::add(const ork_stats& call) {
  std::lock_guard lock(mutex_);
  accumulate(total_, call);
}

ork_stats DeviceStats::snapshot() const {
  std::lock_guard lock(mutex_);
  ork_stats s = total_;
  s.struct_size = sizeof(ork_stats);
  return s;
}

void DeviceStats::reset() {
  std::lock_guard lock(mutex_);
  total_ = ork_stats{};
}

CallMeter::CallMeter(ork_device& device) : device_(device), t0_ns_(now_ns()) {
  if (device_.fake) {  // the device's cache counts every call: this one's share is its delta
    const auto c = device_.fake->weight_cache_stats();
    cache_hits0_ = c.hits;
    cache_misses0_ = c.misses;
    chain_ns0_ = device_.fake->chain_ns();
  }
  evictions0_ = device_.backend->context_evictions();
}

ork_status CallMeter::finish(ork_stats* out) {
  ork_stats s{};
  s.struct_size = sizeof(ork_stats);
  s.calls = calls;
  s.wall_ns = nonneg(now_ns() - t0_ns_);
  if (host_device_ns < 0) {  // the runner measured the call (an NPU backend)
    s.plan_ns = nonneg(run.plan_ns);
    s.pack_ns = nonneg(run.pack_ns);
    s.wait_ns = nonneg(run.wait_ns);
    s.submit_ns = nonneg(run.submit_ns - run.wait_ns);  // RunStats' submit_ns is submit + wait
    s.unpack_ns = nonneg(run.unpack_ns);
    s.device_ns = nonneg(run.device_ns);
    s.device_unknown_calls = run.device_ns < 0 ? 1 : 0;
    s.bytes_to_device = nonneg(run.bytes_to_device);
    s.bytes_from_device = nonneg(run.bytes_from_device);
    s.submits = static_cast<uint64_t>(run.submits);
    s.context_builds = run.built ? calls : 0;
    s.context_hits = run.built ? 0 : calls;
    s.context_evictions = device_.backend->context_evictions() - evictions0_;
  } else {
    s.device_ns = nonneg(host_device_ns);  // the cpu is the device: its multiply
    s.cpu_threads = cpu_threads;
  }
  if (device_.fake) {
    const auto c = device_.fake->weight_cache_stats();
    s.weight_cache_hits = c.hits - cache_hits0_;
    s.weight_cache_misses = c.misses - cache_misses0_;
    s.emulator_ns = device_.fake->chain_ns() - chain_ns0_;
  }
  device_.stats.add(s);
  if (out != nullptr) {
    const uint32_t n = std::min<uint32_t>(out->struct_size, sizeof s);
    s.struct_size = n;
    std::memcpy(out, &s, n);
  }
  return ORK_OK;
}

ork_status check_out_struct(uint32_t struct_size, const char* what) {
  if (struct_size == 0)
    return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}.struct_size is 0: set it to the struct's sizeof", what));
  if (struct_size < sizeof(uint64_t))
    return fail(ORK_E_INVALID_ARGUMENT,
                fmt::format("{}.struct_size = {}: smaller than the struct's header (8 bytes)", what, struct_size));
  return ORK_OK;
}

ork_memory_info memory_info(const ork_device& d) {
  ork_memory_info m{};
  m.struct_size = sizeof m;
  const uint64_t host_free = available_host_bytes();
  d.backend->memory(d, host_free, m);  // the window, or (cpu) the host
  if (d.fake) {
    const auto c = d.fake->weight_cache_stats();
    m.weight_cache_bytes = c.bytes;
    m.weight_cache_capacity_bytes = c.capacity;
  }
  return m;
}

void add_host_weight_bytes(ork_device& device, int64_t delta) { device.host_weight_bytes += delta; }

}  // namespace ork::api

extern "C" {

ORK_API ork_status ork_device_memory(ork_device* device, ork_memory_info* info) {
  return ork::api::guarded([&] {
    if (device == nullptr) return ork::api::fail(ORK_E_INVALID_ARGUMENT, "ork_device_memory: device is NULL");
    if (info == nullptr) return ork::api::fail(ORK_E_INVALID_ARGUMENT, "ork_device_memory: info is NULL");
    if (auto s = ork::api::check_out_struct(info->struct_size, "ork_device_memory: info"); s != ORK_OK) return s;
    ork_memory_info m;
    {
      std::lock_guard lock(device->mutex);  // the runner's and the kernel's state (device.h)
      m = ork::api::memory_info(*device);
    }
    const uint32_t n = std::min<uint32_t>(info->struct_size, sizeof m);
    m.struct_size = n;
    std::memcpy(info, &m, n);
    return ork::api::ok();
  });
}

ORK_API ork_status ork_device_get_stats(ork_device* device, ork_stats* stats) {
  return ork::api::guarded([&] {
    if (device == nullptr) return ork::api::fail(ORK_E_INVALID_ARGUMENT, "ork_device_get_stats: device is NULL");
    if (stats == nullptr) return ork::api::fail(ORK_E_INVALID_ARGUMENT, "ork_device_get_stats: stats is NULL");
    if (auto s = ork::api::check_out_struct(stats->struct_size, "ork_device_get_stats: stats"); s != ORK_OK) return s;
    ork_stats t = device->stats.snapshot();
    const uint32_t n = std::min<uint32_t>(stats->struct_size, sizeof t);
    t.struct_size = n;
    std::memcpy(stats, &t, n);
    return ork::api::ok();
  });
}

ORK_API ork_status ork_device_reset_stats(ork_device* device) {
  if (device == nullptr) return ork::api::fail(ORK_E_INVALID_ARGUMENT, "ork_device_reset_stats: device is NULL");
  device->stats.reset();
  return ork::api::ok();
}

}  // extern "C"
