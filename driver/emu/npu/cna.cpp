// CNA feature and weight DMA (docs/emulator.md "CNA"). Index functions: docs/regcmd-contract.md section 2.
#include "driver/emu/npu/cna.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "driver/common/fp16.h"
#include "driver/common/npu_layout.h"

namespace ork::emu {
namespace {

constexpr uint64_t kAtomBytes = hw::kAtomBytes;  // feature atoms (driver/common/npu_layout.h)
constexpr size_t kRun = hw::kKBlock;             // each kernel's K values per weight block

TaskOutcome read_fault(std::string what) {
  return {CoreStatus::dma_read_error, kIntDmaReadError, std::move(what)};
}

}  // namespace

TaskOutcome load_feature(const DeviceMemory& mem, const TaskConfig& cfg, std::vector<uint8_t>& tile) {
  const size_t rb = cfg.row_bytes();
  const size_t surfaces = rb / kAtomBytes;  // kt % 32 == 0: whole atoms for every dtype
  tile.resize(size_t{cfg.mc} * rb);
  // Surface s holds atom s of every row: rows LINE_STRIDE atoms apart, surfaces SURF_STRIDE.
  const uint64_t span_bytes = ((uint64_t{cfg.mc} - 1) * cfg.a_line_atoms + 1) * kAtomBytes;
  std::vector<const uint8_t*> src(surfaces);
  for (size_t s = 0; s < surfaces; ++s) {
    const uint64_t iova = cfg.a_iova + s * cfg.a_surf_atoms * kAtomBytes;
    src[s] = mem.span(iova, span_bytes);
    if (src[s] == nullptr) {
      return read_fault(fmt::format("feature DMA: K-surface {} at IOVA 0x{:x} ({} bytes) is outside every BO",
                                    s, iova, span_bytes));
    }
  }
  // Rows in blocks of 8 (row_bytes is often a power of two: see dpu.cpp's store).
  constexpr size_t kRowBlock = 8;
  const size_t line = cfg.a_line_atoms * kAtomBytes;
  for (size_t m0 = 0; m0 < cfg.mc; m0 += kRowBlock) {
    const size_t m1 = std::min<size_t>(cfg.mc, m0 + kRowBlock);
    for (size_t s = 0; s < surfaces; ++s)
      for (size_t m = m0; m < m1; ++m) std::memcpy(tile.data() + m * rb + s * kAtomBytes, src[s] + m * line, kAtomBytes);
  }
  return {};
}

TaskOutcome load_weights(const DeviceMemory& mem, const TaskConfig& cfg, const uint8_t*& weights) {
  weights = mem.span(cfg.b_iova, cfg.b_bytes);
  if (weights == nullptr) {
    return read_fault(fmt::format("weight DMA: {} bytes at IOVA 0x{:x} (DCOMP_ADDR0, WEIGHT_SIZE0) are outside every BO",
                                  cfg.b_bytes, cfg.b_iova));
  }
  return {};
}

// Weights: [N/wa][K/32][wa][32] elements (wa = 32 int8, 16 fp16, 64 int4), so each column's
// 32-K block is kRun = 32 contiguous elements.
void gather_weights_int(const TaskConfig& cfg, const uint8_t* w, std::vector<int8_t>& bt) {
  const size_t kt = cfg.kt, wa = cfg.weight_atom(), kblocks = kt / kRun;
  bt.resize(size_t{cfg.cols} * kt);
  // Per atom block, 8 K-blocks at a time (8 x wa x 32 elements, in L1), then kernel by
  // kernel: each column gets 256 contiguous elements per pass. Column by column the reads
  // jumped wa * 32 elements per 32; block by block the 32-element writes went to rows K
  // apart, the same few L1 sets (both measured slower).
  constexpr size_t kChunk = 8;
  for (size_t n0 = 0; n0 < cfg.cols; n0 += wa) {
    const size_t width = std::min<size_t>(wa, cfg.cols - n0);
    for (size_t kb0 = 0; kb0 < kblocks; kb0 += kChunk) {
      const size_t kb1 = std::min(kblocks, kb0 + kChunk);
      for (size_t j = 0; j < width; ++j) {
        int8_t* dst = bt.data() + (n0 + j) * kt;
        for (size_t kb = kb0; kb < kb1; ++kb) {
          const size_t first = n0 * kt + kb * wa * kRun + j * kRun;  // element (n0 + j, 32 kb)
          if (cfg.type == NpuType::int8) {
            std::memcpy(dst + kb * kRun, w + first, kRun);
          } else {
            for (size_t i = 0; i < kRun; ++i) dst[kb * kRun + i] = int4::value_at(w, static_cast<int64_t>(first + i));
          }
        }
      }
    }
  }
}

// half -> float for all 65536 patterns, built once (256 KiB): the fp16 gathers convert
// millions of elements per task and the branchy conversion dominated them.
static const std::vector<float>& half_table() {
  static const std::vector<float> table = [] {
    std::vector<float> t(65536);
    for (uint32_t h = 0; h < 65536; ++h) t[h] = half_to_float(static_cast<uint16_t>(h));
    return t;
  }();
  return table;
}

void gather_weight_block_f16(const TaskConfig& cfg, const uint8_t* w, size_t n0, std::vector<float>& blk) {
  constexpr size_t wa = kF16BlockColumns;  // the fp16 weight atom is 16 kernels
  const size_t kt = cfg.kt, width = std::min<size_t>(wa, cfg.cols - n0);
  const float* table = half_table().data();
  blk.assign(kt * wa, 0.0f);  // columns past the task's end stay 0 and are never stored
  for (size_t kb = 0; kb < kt / kRun; ++kb) {
    const uint8_t* block = w + ((n0 / wa) * wa * kt + kb * wa * kRun) * 2;  // 512 contiguous halves
    for (size_t nn = 0; nn < width; ++nn) {
      for (size_t j = 0; j < kRun; ++j) {
        uint16_t h;
        std::memcpy(&h, block + (nn * kRun + j) * 2, 2);
        blk[(kb * kRun + j) * wa + nn] = table[h];
      }
    }
  }
}

const int8_t* feature_int8(const TaskConfig& cfg, const std::vector<uint8_t>& tile, std::vector<int8_t>& widened) {
  if (cfg.type == NpuType::int8) return reinterpret_cast<const int8_t*>(tile.data());
  const size_t n = size_t{cfg.mc} * cfg.kt;
  widened.resize(n);
  for (size_t i = 0; i < n; ++i) widened[i] = int4::value_at(tile.data(), static_cast<int64_t>(i));  // rows are whole bytes
  return widened.data();
}

void unpack_feature_f16(const TaskConfig& cfg, const std::vector<uint8_t>& tile, std::vector<float>& a) {
  const size_t n = size_t{cfg.mc} * cfg.kt;
  a.resize(n);
  const float* table = half_table().data();
  for (size_t i = 0; i < n; ++i) {
    uint16_t h;
    std::memcpy(&h, tile.data() + i * 2, 2);
    a[i] = table[h];
  }
}

}  // namespace ork::emu
