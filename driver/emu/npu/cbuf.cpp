// CBUF: 12 banks x 32 KiB per core (driver/common/cbuf_limits.h). On the K-reduction
// schedule the CNA stores the feature tile (in 64-row groups past 64 rows) in a ring of
// DATA_BANK banks; bytes past the ring's end overwrite the first rows (deterministic wrong
// rows, like the silicon at mg_max*64 + 1: ORK's M-tile table).
#include "driver/emu/npu/cbuf.h"

#include "driver/common/cbuf_limits.h"

#include <fmt/format.h>

#include <cstring>
#include <vector>

namespace ork::emu {

uint32_t resident_rows(uint32_t kt) { return static_cast<uint32_t>(hw::resident_rows(kt)); }

TaskOutcome check_wedge(const TaskConfig& cfg) {
  if (hw::wide_k_wedges(cfg.mc, cfg.kt)) {
    return {CoreStatus::wedged, 0,
            fmt::format("K = {} in one task with {} rows >= R = {}: past K = {} such a task never completes "
                        "(docs/emulator.md \"CBUF limits\")", cfg.kt, cfg.mc, resident_rows(cfg.kt), hw::kMaxFullK)};
  }
  if (uint64_t{cfg.row_bytes()} > hw::kCbufBankBytes) {
    return {CoreStatus::wedged, 0,
            fmt::format("one kernel of K = {} is {} bytes, more than a 32 KiB CBUF bank (a guess: MTX refuses it)",
                        cfg.kt, cfg.row_bytes())};
  }
  if (cfg.schedule == CbufSchedule::resident_rows && cfg.mc > resident_rows(cfg.kt)) {
    return {CoreStatus::wedged, 0,
            fmt::format("resident-row schedule (CBUF_CON0 = 0) with {} rows > R = {} at K = {}: the task "
                        "never completes", cfg.mc, resident_rows(cfg.kt), cfg.kt)};
  }
  return {};
}

namespace {

// The ring: group g occupies ring bytes [g*G, (g+1)*G) modulo the capacity; groups are
// written in order, so the last writer of a byte wins; rows past mc in the last group are
// zero (the CNA fills whole groups). Then every row reads back from its own position.
uint32_t wrap_ring(const TaskConfig& cfg, std::span<uint8_t> tile) {
  const size_t rb = cfg.row_bytes();
  const size_t stored = static_cast<size_t>(hw::stored_rows(cfg.mc));  // whole groups past 64 rows
  const size_t cap = size_t{cfg.data_banks} * hw::kCbufBankBytes;
  if (stored * rb <= cap) return 0;
  std::vector<uint8_t> stream(stored * rb, 0);
  std::memcpy(stream.data(), tile.data(), size_t{cfg.mc} * rb);
  std::vector<uint8_t> ring(cap, 0);
  for (size_t i = 0; i < stream.size(); ++i) ring[i % cap] = stream[i];
  uint32_t changed = 0;
  for (size_t r = 0; r < cfg.mc; ++r) {
    uint8_t* row = tile.data() + r * rb;
    bool differs = false;
    for (size_t j = 0; j < rb; ++j) {
      const uint8_t v = ring[(r * rb + j) % cap];
      differs |= v != row[j];
      row[j] = v;
    }
    changed += differs ? 1 : 0;
  }
  return changed;
}

// fp16 on the K-reduction schedule, mc >= 9 and K >= 2048: the M-tile experiment measured "exact
// for mc <= 8, garbage from 9". The model: row r >= 8 computes with the feature of row r % 8
// (the M-scheduler's 8-row window repeats; docs/hardware.md section 10.4). Deterministic and wrong
// unless rows repeat.
uint32_t fp16_row_window(const TaskConfig& cfg, std::span<uint8_t> tile) {
  if (cfg.type != NpuType::fp16 || cfg.schedule != CbufSchedule::k_reduction) return 0;
  if (cfg.mc <= kFp16ExactRows || cfg.kt < kFp16BadFromK) return 0;
  const size_t rb = cfg.row_bytes();
  for (size_t r = kFp16ExactRows; r < cfg.mc; ++r)
    std::memcpy(tile.data() + r * rb, tile.data() + (r % kFp16ExactRows) * rb, rb);
  return cfg.mc - kFp16ExactRows;
}

}  // namespace

uint32_t apply_cbuf(const TaskConfig& cfg, std::span<uint8_t> tile) {
  if (cfg.schedule != CbufSchedule::k_reduction) return 0;
  return wrap_ring(cfg, tile) + fp16_row_window(cfg, tile);
}

}  // namespace ork::emu
