// The runner: resident weights, and a cache of contexts (context.h) keyed by (weights, M,
// cores, mc_cap), so a repeated call only packs A, submits, waits and unpacks C.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <tuple>

#include "driver/common/result.h"
#include "driver/kmd/kmd.h"
#include "lib/matmul/context.h"
#include "lib/matmul/plan.h"

namespace ork::matmul {

// K x N weights packed once into the native layout of their K-slices, in one BO. The
// layout depends on K, N and dtype only, never on M or the core count.
class ResidentWeights {
 public:
  // `row_major`: int8_t[K*N], uint16_t[K*N] (fp16 bit patterns) or, for int4, the packed
  // nibble stream of K x N (ceil(K*N/2) bytes, element k*N+n low nibble first).
  static Result<std::unique_ptr<ResidentWeights>> create(driver::Kmd& kmd, DType dtype, int64_t k,
                                                         int64_t n, const void* row_major);
  // w4a8: packed int4 K x N widened to int8 as they are written to the NPU buffer (an int8
  // resident; the NPU has no int8 x int4 mode, rk3588-npu.md addendum).
  static Result<std::unique_ptr<ResidentWeights>> create_w4a8(driver::Kmd& kmd, int64_t k, int64_t n,
                                                              const uint8_t* packed);
  DType dtype() const { return dtype_; }
  int64_t k() const { return k_; }
  int64_t n() const { return n_; }
  const driver::Bo& bo() const { return *bo_; }
  uint64_t id() const { return id_; }  // unique per process: keys the runner's cache

 private:
  ResidentWeights() = default;
  DType dtype_ = DType::int8;
  int64_t k_ = 0, n_ = 0;
  std::unique_ptr<driver::Bo> bo_;
  uint64_t id_ = 0;
};

struct RunOptions {
  int cores = kMaxCores;
  int64_t mc_cap = 0;
  bool fp16_out = false;  // fp16 weights only: C as binary16
};

class MatmulRunner {
 public:
  explicit MatmulRunner(driver::Kmd& kmd);
  ~MatmulRunner();
  MatmulRunner(const MatmulRunner&) = delete;
  MatmulRunner& operator=(const MatmulRunner&) = delete;

  // C (m x n row-major) = A (m x k row-major) x W; element types by the weights' dtype
  // (execute_any in context.h): int8 -> int32, int4 (packed A) -> int32, fp16 -> fp32/fp16.
  Status run(const ResidentWeights& w, const void* a, int64_t m, void* c,
             const RunOptions& options, RunStats* stats = nullptr);
  // Drops the cached contexts that reference `w` (call before destroying it).
  void forget(const ResidentWeights& w);
  // Contexts kept at most (least recently used dropped first).
  static constexpr size_t kMaxContexts = 16;

 private:
  using Key = std::tuple<uint64_t, int64_t, int, int64_t, bool>;  // weights id, m, cores, mc_cap, fp16_out
  Result<Context*> context_for(const ResidentWeights& w, int64_t m, const RunOptions& options,
                               bool* built);

  driver::Kmd& kmd_;
  std::map<Key, std::unique_ptr<Context>> contexts_;
  uint64_t clock_ = 0;
};

}  // namespace ork::matmul
