// One task through the pipeline: registers -> checks -> wedge rules -> CNA DMA -> CBUF
// model -> CORE -> DPU DMA. Nothing is written unless every stage before the output
// succeeded and every output range is inside a BO (docs/emulator.md "Faults").
#include "driver/emu/npu/task.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "driver/emu/npu/cbuf.h"
#include "driver/emu/npu/cna.h"
#include "driver/emu/npu/core.h"
#include "driver/emu/npu/dpu.h"
#include "driver/emu/npu/task_config.h"
#include "driver/emu/npu/weight_cache.h"
#include "driver/timing/timing_model.h"

namespace ork::emu {
namespace {

// Scratch reused across tasks on a thread (the fake kernel runs cores on threads): a task
// of 128 rows, K = N = 2048 needs ~6 MiB, allocated once per thread.
struct Scratch {
  std::vector<uint8_t> tile;
  std::vector<int8_t> a_int4, bt;  // widened int4 feature; gathered weights (engine input)
  std::vector<float> a_f32, b_f32, c_f32;
  std::vector<int32_t> c_i32;
};

Scratch& scratch() {
  thread_local Scratch s;
  return s;
}

TaskOutcome done() { return {CoreStatus::ok, hw::kIntTaskDone, {}}; }

// The task's weight block prepared for the engine: from the weight cache when the same
// bytes were prepared before (weight_cache.h), else gathered and prepared now. Only
// tracked BOs (the cache model's NPU-side copies) are cached: an untracked BO can be
// written by the host at any time without the emulator knowing.
std::shared_ptr<const PreparedInt8> prepared_weights(const DeviceMemory& mem, const TaskConfig& cfg,
                                                     const uint8_t* weights, const Int8Engine& engine) {
  WeightCache* cache = mem.weight_cache();  // the device's (memory.h); none: prepare every time
  const auto origin = cache ? mem.origin(cfg.b_iova, cfg.b_bytes) : std::nullopt;
  WeightKey key;
  if (origin) {
    key = {origin->serial, origin->generation, origin->offset, cfg.kt, cfg.cols, cfg.type, &engine};
    if (auto hit = cache->find(key)) return hit;
  }
  Scratch& s = scratch();
  gather_weights_int(cfg, weights, s.bt);
  auto prepared = engine.prepare(s.bt.data(), cfg.kt, cfg.cols);
  if (origin) cache->insert(key, prepared);
  return prepared;
}

TaskOutcome compute_integer(const DeviceMemory& mem, const TaskConfig& cfg, const uint8_t* weights) {
  const Int8Engine& engine = mem.int8_engine();
  const auto prepared = prepared_weights(mem, cfg, weights, engine);
  Scratch& s = scratch();
  const int8_t* a = feature_int8(cfg, s.tile, s.a_int4);
  if (auto cube = output_cube_i32(mem, cfg)) {  // written in place: the same bytes, one pass
    engine.multiply(a, cfg.mc, *prepared, *cube);
    return {};
  }
  s.c_i32.resize(size_t{cfg.mc} * cfg.cols);
  engine.multiply(a, cfg.mc, *prepared, {s.c_i32.data(), cfg.cols, cfg.cols, 0});
  return store_output_i32(mem, cfg, s.c_i32);
}

TaskOutcome compute_fp16(const DeviceMemory& mem, const TaskConfig& cfg, const uint8_t* weights) {
  Scratch& s = scratch();
  unpack_feature_f16(cfg, s.tile, s.a_f32);
  s.c_f32.resize(size_t{cfg.mc} * cfg.cols);
  for (size_t n0 = 0; n0 < cfg.cols; n0 += kF16BlockColumns) {
    gather_weight_block_f16(cfg, weights, n0, s.b_f32);
    const size_t width = std::min<size_t>(kF16BlockColumns, cfg.cols - n0);
    matmul_f16_block16(s.a_f32.data(), s.b_f32.data(), s.c_f32.data() + n0, cfg.mc, cfg.kt, width, cfg.cols);
  }
  return store_output_f32(mem, cfg, s.c_f32);
}

}  // namespace

TaskOutcome execute_task(const RegisterFile& regs, const DeviceMemory& mem, ChainWork work) {
  TaskConfig cfg;
  if (auto o = read_task_config(regs, cfg); o.status != CoreStatus::ok) return o;
  if (auto o = check_wedge(cfg); o.status != CoreStatus::ok) return o;
  if (work == ChainWork::timing_only) {  // the task as the timing model sees it, nothing moved
    TaskOutcome out = done();
    out.demand = task_demand(cfg);
    return out;
  }
  Scratch& s = scratch();
  if (auto o = load_feature(mem, cfg, s.tile); o.status != CoreStatus::ok) return o;
  const uint8_t* weights = nullptr;
  if (auto o = load_weights(mem, cfg, weights); o.status != CoreStatus::ok) return o;
  apply_cbuf(cfg, s.tile);
  TaskOutcome out = cfg.type == NpuType::fp16 ? compute_fp16(mem, cfg, weights)
                                              : compute_integer(mem, cfg, weights);
  if (out.status != CoreStatus::ok) return out;
  const uint64_t saturated = out.saturated_cells;
  out = done();
  out.demand = task_demand(cfg);
  out.saturated_cells = saturated;
  return out;
}

}  // namespace ork::emu
