// DPU output stage (docs/emulator.md "DPU").
#include "driver/emu/npu/dpu.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "driver/common/fp16.h"
#include "driver/common/npu_layout.h"

namespace ork::emu {
namespace {

constexpr uint64_t kOutAtomBytes = hw::kAtomBytes;  // output atoms (driver/common/npu_layout.h)

// Host pointers of every output surface, or the fault naming the first that is outside.
TaskOutcome map_surfaces(const DeviceMemory& mem, const TaskConfig& cfg, std::vector<uint8_t*>& surfaces) {
  const size_t c2 = cfg.out_c2();
  const size_t count = (cfg.cols + c2 - 1) / c2;
  const uint64_t bytes = uint64_t{cfg.mc} * kOutAtomBytes;
  surfaces.resize(count);
  for (size_t s = 0; s < count; ++s) {
    const uint64_t iova = cfg.c_iova + s * cfg.c_surf_atoms * kOutAtomBytes;
    surfaces[s] = mem.span_for_write(iova, bytes);
    if (surfaces[s] == nullptr) {
      return {CoreStatus::dma_write_error, kIntDmaWriteError,
              fmt::format("output DMA: surface {} at IOVA 0x{:x} ({} bytes) is outside every BO", s, iova, bytes)};
    }
  }
  return {};
}

// Writes element (m, n) of every row and column through `put(dst, m, n)`. Columns past
// cfg.cols in the last surface are left as they were.
template <class Put>
void write_cells(const TaskConfig& cfg, const std::vector<uint8_t*>& surfaces, Put put) {
  const size_t c2 = cfg.out_c2(), eb = cfg.out_bytes();
  for (size_t s = 0; s < surfaces.size(); ++s) {
    const size_t n0 = s * c2, n1 = std::min<size_t>(cfg.cols, n0 + c2);
    for (size_t m = 0; m < cfg.mc; ++m) {
      uint8_t* row = surfaces[s] + m * kOutAtomBytes;
      for (size_t n = n0; n < n1; ++n) put(row + (n - n0) * eb, m, n);
    }
  }
}

}  // namespace

TaskOutcome store_output_i32(const DeviceMemory& mem, const TaskConfig& cfg, std::span<const int32_t> c) {
  std::vector<uint8_t*> surfaces;
  if (auto o = map_surfaces(mem, cfg, surfaces); o.status != CoreStatus::ok) return o;
  const size_t cols = cfg.cols;
  if (cfg.type == NpuType::int4) {
    // int4 -> int16: accumulate exactly in int32, then saturate. The saturation is OUR
    // assumption (the capture only shows int16 output); tests-hw/test_int4_saturation.
    // Every clamped cell is counted, so a plan that let a sum leave int16 is seen, never
    // silently wrong (the fake kernel's statistics, docs/emulator.md "DPU").
    uint64_t clamped = 0;
    write_cells(cfg, surfaces, [&](uint8_t* dst, size_t m, size_t n) {
      const int32_t exact = c[m * cols + n];
      const int16_t v = static_cast<int16_t>(std::clamp<int32_t>(exact, -32768, 32767));
      clamped += v != exact ? 1 : 0;
      std::memcpy(dst, &v, 2);
    });
    TaskOutcome out;
    out.saturated_cells = clamped;
    return out;
  } else {  // int32: one copy of up to 16 bytes per atom
    // Rows in blocks of 8: C's rows are often a power of two bytes apart, so a whole task's
    // rows would share a few L1 sets; 8 rows' lines stay put while every surface goes by.
    constexpr size_t kRowBlock = 8;
    const size_t c2 = cfg.out_c2();
    for (size_t m0 = 0; m0 < cfg.mc; m0 += kRowBlock) {
      const size_t m1 = std::min<size_t>(cfg.mc, m0 + kRowBlock);
      for (size_t s = 0; s < surfaces.size(); ++s) {
        const size_t n0 = s * c2, width = std::min<size_t>(cols, n0 + c2) - n0;
        uint8_t* dst = surfaces[s];
        const int32_t* src = c.data() + n0;
        if (width == c2) {  // a whole atom: a fixed 16-byte copy the compiler inlines
          for (size_t m = m0; m < m1; ++m) std::memcpy(dst + m * kOutAtomBytes, src + m * cols, kOutAtomBytes);
        } else {
          for (size_t m = m0; m < m1; ++m) std::memcpy(dst + m * kOutAtomBytes, src + m * cols, width * 4);
        }
      }
    }
  }
  return {};
}

std::optional<Int32Out> output_cube_i32(const DeviceMemory& mem, const TaskConfig& cfg) {
  if (cfg.type != NpuType::int8 || cfg.c_iova % 4 != 0 || cfg.c_surf_atoms < cfg.mc) return std::nullopt;
  const size_t count = (cfg.cols + cfg.out_c2() - 1) / cfg.out_c2();
  const uint64_t bytes = ((count - 1) * cfg.c_surf_atoms + cfg.mc) * kOutAtomBytes;
  uint8_t* cube = mem.span_for_write(cfg.c_iova, bytes);
  if (cube == nullptr) return std::nullopt;
  // IOVA and BO base are both page-aligned in the fake kernel, so 4-byte IOVA alignment is
  // 4-byte host alignment.
  return Int32Out{reinterpret_cast<int32_t*>(cube), kOutAtomBytes / 4, cfg.out_c2(), cfg.c_surf_atoms * kOutAtomBytes / 4};
}

TaskOutcome store_output_f32(const DeviceMemory& mem, const TaskConfig& cfg, std::span<const float> c) {
  std::vector<uint8_t*> surfaces;
  if (auto o = map_surfaces(mem, cfg, surfaces); o.status != CoreStatus::ok) return o;
  const size_t cols = cfg.cols;
  if (cfg.fp16_out) {
    write_cells(cfg, surfaces, [&](uint8_t* dst, size_t m, size_t n) {
      const uint16_t h = float_to_half(c[m * cols + n]);  // round to nearest even
      std::memcpy(dst, &h, 2);
    });
  } else {
    write_cells(cfg, surfaces, [&](uint8_t* dst, size_t m, size_t n) { std::memcpy(dst, &c[m * cols + n], 4); });
  }
  return {};
}

}  // namespace ork::emu
