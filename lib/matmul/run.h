// The runner: resident weights, cached per-shape contexts (plan + buffers + command lists
// built once), and the per-call path: pack A, submit, wait, accumulate K-slices, unpack C.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <tuple>
#include <vector>

#include "driver/common/result.h"
#include "driver/kmd/kmd.h"
#include "lib/matmul/plan.h"

namespace ork::matmul {

// K x N weights packed once into the native layout of their K-slices, in one BO.
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

// Host-side time of one call, split the way mc_prof reports it (ns).
struct RunStats {
  int64_t plan_ns = 0;      // context lookup (or plan + build on a miss)
  int64_t pack_ns = 0;      // A into the native layout + cache sync
  int64_t submit_ns = 0;    // submit + wait, wall time
  int64_t device_ns = 0;    // time the kernel reports (rknpu hw_elapse_time), -1 if none
  int64_t unpack_ns = 0;    // accumulate K-slices + unpack C
  int submits = 0;
  bool built = false;       // true when this call planned and built the command lists
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
  struct Context;
  using Key = std::tuple<uint64_t, int64_t, int, int64_t>;  // weights id, m, cores, mc_cap
  Result<Context*> context_for(const ResidentWeights& w, int64_t m, const RunOptions& options,
                               bool* built);

  driver::Kmd& kmd_;
  std::map<Key, std::unique_ptr<Context>> contexts_;
  uint64_t clock_ = 0;
};

}  // namespace ork::matmul
