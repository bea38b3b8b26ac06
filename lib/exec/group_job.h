// A group of a layer's matmuls run as its board plan (board_plan.h): one matmul job
// (lib/matmul/job.h) of a context per matmul, whose tasks sit on the cores the list
// scheduler chose, chained into one submit (chain_contexts: one command list per core).
// The contexts and the chained descriptor are built once per group of weight buffers and
// shape, and kept: a pinned or resident model's groups are built at the first token and
// reused by every later one; a streamed tensor landing in another slot builds again.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <tuple>
#include <vector>

#include "driver/common/result.h"
#include "driver/kmd/kmd.h"
#include "lib/matmul/job.h"
#include "lib/matmul/plan.h"
#include "lib/matmul/run.h"

namespace ork::exec {

// One matmul of the group: its weights (a slot holding the native layout), shape, A (the
// runner's formats: execute_any) and where its C goes (written at completion).
struct GroupMember {
  const driver::Bo* weights = nullptr;
  int64_t k = 0, n = 0;
  const void* a = nullptr;
  void* c = nullptr;
  int64_t slice_k = 0;  // int4: the weights' K-slice width (matmul::PlanOptions::slice_k; 0 = the dtype's)
};

class GroupJobs {
 public:
  // `keep_bytes`: the most bytes of BOs (A, C, command lists) the kept groups hold; past it
  // the groups with no job in flight are dropped (built again when met again).
  GroupJobs(driver::Kmd& kmd, matmul::DType dtype, int64_t m, int cores,
            size_t keep_bytes = matmul::MatmulRunner::default_context_bytes())
      : kmd_(kmd), dtype_(dtype), m_(m), cores_(cores), keep_bytes_(keep_bytes) {}
  // Packs every member's A and submits the group as one chained job (not waited for).
  // -ENOTSUP: the group's plan does not chain (a matmul in several slice groups); the caller
  // runs its matmuls one by one instead.
  Result<std::unique_ptr<matmul::Job>> launch(std::span<const GroupMember> members);
  // The members as one fused matmul (fusion.h): their weights, slice by slice, in members[0]'s
  // BO, one context of the fused plan the chooser took (executor_group_plan with fuse), K x
  // the members' N summed; A is members[0]'s (they read one A), C's columns go to
  // `columns` (fusion.h member_columns) at completion. -ENOTSUP: the chosen plan is not
  // the fused one.
  Result<std::unique_ptr<matmul::Job>> launch_fused(std::span<const GroupMember> members,
                                                    std::span<const matmul::ColumnPart> columns);
  size_t kept() const { return recorded_.size(); }

 private:
  using Key = std::vector<std::tuple<const driver::Bo*, int64_t, int64_t, int64_t>>;  // weights, K, N, width
  struct Recorded {
    std::vector<std::shared_ptr<matmul::Context>> contexts;
    driver::CheckedSubmit desc;  // checked once (Kmd::check): every launch submits it as is
  };
  Result<Recorded*> record(std::span<const GroupMember> members, bool fused);
  void bound();

  driver::Kmd& kmd_;
  matmul::DType dtype_;
  int64_t m_;
  int cores_;
  size_t keep_bytes_;
  std::map<Key, Recorded> recorded_;
};

}  // namespace ork::exec
