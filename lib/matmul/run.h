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
  static Result<std::unique_ptr<ResidentWeights>> create(driver::Kmd& kmd, DType dtype, int64_t k,
                                                         int64_t n, const void* row_major);
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
};

class MatmulRunner {
 public:
  explicit MatmulRunner(driver::Kmd& kmd);
  ~MatmulRunner();
  MatmulRunner(const MatmulRunner&) = delete;
  MatmulRunner& operator=(const MatmulRunner&) = delete;

  // C (m x n row-major int32) = A (m x k row-major int8) x W.
  Status run(const ResidentWeights& w, const void* a, int64_t m, void* c,
             const RunOptions& options, RunStats* stats = nullptr);
  // Drops the cached contexts that reference `w` (call before destroying it).
  void forget(const ResidentWeights& w);
  // Contexts kept at most (least recently used dropped first).
  static constexpr size_t kMaxContexts = 16;

 private:
  using Key = std::tuple<uint64_t, int64_t, int, int64_t>;  // weights id, m, cores, mc_cap
  Result<Context*> context_for(const ResidentWeights& w, int64_t m, const RunOptions& options,
                               bool* built);

  driver::Kmd& kmd_;
  std::map<Key, std::unique_ptr<Context>> contexts_;
  uint64_t clock_ = 0;
};

}  // namespace ork::matmul
