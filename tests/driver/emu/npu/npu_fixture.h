// Test helpers for the emulated NPU: a device memory with BOs separated by unmapped guard
// gaps, native-layout packers written straight from the contract's index functions
// (docs/regcmd-contract.md section 2), plain reference loops, and a task emitter that
// writes exactly the registers of docs/regcmd-contract.md section 3.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <deque>
#include <random>
#include <vector>

#include "driver/common/cbuf_limits.h"
#include "driver/emu/npu/memory.h"
#include "driver/emu/npu/weight_cache.h"
#include "driver/emu/npu/pc.h"
#include "driver/regcmd/regcmd.h"
#include "driver/regs/npu_regs.h"

namespace ork::emu::testing {

struct Bo {
  uint64_t iova = 0;
  std::vector<uint8_t> bytes;
};

class Device {
 public:
  // A BO of `size` bytes at the next page, with a 64 KiB unmapped gap before the next one
  // (any access that strays from a BO lands in a gap, never in a neighbour). `tracked`: as
  // the fake kernel maps a cached BO's device copy (memory.h): written only through mem.
  Bo& alloc(size_t size, uint8_t fill = 0, bool tracked = false) {
    bos_.push_back(Bo{next_, std::vector<uint8_t>(size, fill)});
    Bo& bo = bos_.back();
    mem.map(bo.iova, bo.bytes.data(), bo.bytes.size(), tracked);
    next_ += (size + 0xfff) / 0x1000 * 0x1000 + 0x10000;
    return bo;
  }
  WeightCache weights;  // the device's prepared weights (before mem: it outlives it)
  DeviceMemory mem{&weights};

 private:
  std::deque<Bo> bos_;  // deque: BO storage never moves
  uint64_t next_ = 0x100000;
};

enum class Type { int8 = 0, fp16 = 2, int4 = 6 };

// One task per docs/regcmd-contract.md section 3 (addresses are IOVAs of the task's first elements).
struct TaskSpec {
  Type type = Type::int8;
  uint32_t mc = 0, kt = 0, nt = 0;
  uint64_t a = 0, b = 0, c = 0;
  uint32_t a_surf = 0;       // rows of the whole A buffer
  uint32_t c_surf = 0;       // rows of the whole C buffer
  uint32_t data_banks = 0, weight_banks = 0;  // 0/0: resident-row schedule
  bool fp16_out = false;
  uint32_t op_en = regcmd::kOpEnCnaCoreDpu;
  bool skip_fixed = false;   // omit the fixed matmul registers (driver/regs/matmul_fixed.h)
};

// Bank split the planner writes on the K-reduction schedule (docs/regcmd-contract.md section 4): whole
// 64-row groups past 64 rows, the rows themselves up to 64 (docs/emulator.md "CBUF limits").
inline void k_reduction_banks(TaskSpec& t) {
  const uint32_t bits = t.type == Type::int8 ? 8 : t.type == Type::fp16 ? 16 : 4;
  t.data_banks = static_cast<uint32_t>(ork::hw::data_banks_for_rows(t.mc, int64_t{t.kt} * bits / 8));
  t.weight_banks = static_cast<uint32_t>(ork::hw::kCbufBanks) - t.data_banks;
}

void emit_body(regcmd::Builder& rc, const TaskSpec& t);
// A whole one-task regcmd (body + trailer of a last task).
std::vector<uint64_t> one_task(const TaskSpec& t);
// Writes `entries` into a new BO and runs it as a single chain of one task.
ChainResult run_one(Device& dev, const std::vector<uint64_t>& entries);

// Native layouts (elements as raw bytes; fp16 as uint16_t bits; int4 as values -8..7).
std::vector<uint8_t> pack_a_i8(const std::vector<int8_t>& a, size_t M, size_t K);
std::vector<uint8_t> pack_b_i8(const std::vector<int8_t>& b, size_t K, size_t N);
std::vector<uint8_t> pack_a_f16(const std::vector<uint16_t>& a, size_t M, size_t K);
std::vector<uint8_t> pack_b_f16(const std::vector<uint16_t>& b, size_t K, size_t N);
std::vector<uint8_t> pack_a_i4(const std::vector<int8_t>& a, size_t M, size_t K);
std::vector<uint8_t> pack_b_i4(const std::vector<int8_t>& b, size_t K, size_t N);
// Output element (m, n) of a C buffer with M rows and C2 columns per surface.
template <class T>
T c_at(const std::vector<uint8_t>& c, size_t M, size_t m, size_t n) {
  constexpr size_t c2 = 16 / sizeof(T);
  T v;
  std::memcpy(&v, c.data() + ((n / c2) * M * c2 + m * c2 + n % c2) * sizeof(T), sizeof(T));
  return v;
}

std::vector<int8_t> random_i8(size_t n, uint32_t seed, int lo = -128, int hi = 127);

// The BOs of an int8 product: A (M x K) and B (K x N) packed into their native layouts and
// written through dev.mem (tracked BOs see the writes), C (M x N int32) filled with c_fill.
struct Int8Bos {
  Bo& A;
  Bo& B;
  Bo& C;
};
Int8Bos alloc_int8(Device& dev, const std::vector<int8_t>& a, const std::vector<int8_t>& b, size_t M, size_t K,
                   size_t N, uint8_t c_fill = 0, bool tracked = false);
std::vector<int32_t> ref_matmul_i32(const std::vector<int8_t>& a, const std::vector<int8_t>& b,
                                    size_t M, size_t K, size_t N);

}  // namespace ork::emu::testing
