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
#include "driver/emu/npu/timing.h"

namespace ork::emu {
namespace {

// Scratch reused across tasks on a thread (the fake kernel runs cores on threads): a task
// of 128 rows, K = N = 2048 needs ~10 MiB, allocated once per thread.
struct Scratch {
  std::vector<uint8_t> tile;
  std::vector<int16_t> a_int, bt_int;
  std::vector<int8_t> a8, b8;  // operands of a lent int8 kernel
  std::vector<int32_t> ct;     // the lent kernel's output, C^T
  std::vector<float> a_f32, b_f32, c_f32;
  std::vector<int32_t> c_i32;
};

Scratch& scratch() {
  thread_local Scratch s;
  return s;
}

TaskOutcome done() { return {CoreStatus::ok, kIntDpuGroup0 | kIntDpuGroup1, {}}; }

// int8 through a lent kernel as C^T = B^T x A^T: the weights are gathered in their native
// row order (32-byte runs per kernel, no transpose of the large operand); only the feature
// tile (mc x kt) and the output (mc x cols) are transposed.
TaskOutcome compute_int8_lent(const DeviceMemory& mem, const TaskConfig& cfg, const uint8_t* w, Int8Gemm kernel) {
  Scratch& s = scratch();
  const size_t mc = cfg.mc, kt = cfg.kt, cols = cfg.cols, wa = cfg.weight_atom();
  s.b8.resize(cols * kt);
  for (size_t n = 0; n < cols; ++n)
    for (size_t kb = 0; kb < kt / 32; ++kb)
      std::memcpy(s.b8.data() + n * kt + kb * 32, w + (n / wa) * wa * kt + kb * wa * 32 + (n % wa) * 32, 32);
  s.a8.resize(kt * mc);
  for (size_t m = 0; m < mc; ++m)
    for (size_t k = 0; k < kt; ++k) s.a8[k * mc + m] = static_cast<int8_t>(s.tile[m * kt + k]);
  s.ct.resize(cols * mc);
  kernel(s.b8.data(), s.a8.data(), s.ct.data(), cols, kt, mc);
  s.c_i32.resize(mc * cols);
  for (size_t n = 0; n < cols; ++n)
    for (size_t m = 0; m < mc; ++m) s.c_i32[m * cols + n] = s.ct[n * mc + m];
  return store_output_i32(mem, cfg, s.c_i32);
}

TaskOutcome compute_integer(const DeviceMemory& mem, const TaskConfig& cfg, const uint8_t* weights) {
  if (Int8Gemm kernel = lent_int8_gemm(); kernel && cfg.type == NpuType::int8)
    return compute_int8_lent(mem, cfg, weights, kernel);
  Scratch& s = scratch();
  unpack_feature_int(cfg, s.tile, s.a_int);
  gather_weights_int(cfg, weights, s.bt_int);
  s.c_i32.resize(size_t{cfg.mc} * cfg.cols);
  matmul_i16(s.a_int.data(), s.bt_int.data(), s.c_i32.data(), cfg.mc, cfg.kt, cfg.cols);
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

TaskOutcome execute_task(const RegisterFile& regs, const DeviceMemory& mem) {
  TaskConfig cfg;
  if (auto o = read_task_config(regs, cfg); o.status != CoreStatus::ok) return o;
  if (auto o = check_wedge(cfg); o.status != CoreStatus::ok) return o;
  Scratch& s = scratch();
  if (auto o = load_feature(mem, cfg, s.tile); o.status != CoreStatus::ok) return o;
  const uint8_t* weights = nullptr;
  if (auto o = load_weights(mem, cfg, weights); o.status != CoreStatus::ok) return o;
  apply_cbuf(cfg, s.tile);
  TaskOutcome out = cfg.type == NpuType::fp16 ? compute_fp16(mem, cfg, weights)
                                              : compute_integer(mem, cfg, weights);
  if (out.status != CoreStatus::ok) return out;
  out = done();
  out.demand = task_demand(cfg);
  return out;
}

}  // namespace ork::emu
