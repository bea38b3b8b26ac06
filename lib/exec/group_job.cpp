// A group of matmuls as one chained job (group_job.h).
#include "lib/exec/group_job.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "lib/exec/fusion.h"

namespace ork::exec {

// Drops kept groups with no job in flight (their contexts not busy: the job's rule, lib/matmul
// job.h) while the kept BOs are over keep_bytes_.
void GroupJobs::bound() {
  size_t bytes = 0;
  for (const auto& [key, r] : recorded_)
    for (const auto& c : r.contexts) bytes += c->device_bytes();
  for (auto it = recorded_.begin(); it != recorded_.end() && bytes > keep_bytes_;) {
    const auto& ctxs = it->second.contexts;
    if (std::any_of(ctxs.begin(), ctxs.end(), [](const auto& c) { return c->io->busy != nullptr; })) {
      ++it;
      continue;
    }
    for (const auto& c : ctxs) bytes -= c->device_bytes();
    it = recorded_.erase(it);
  }
}

// A fused group's key has every member on one BO, an unfused one each on its own slot's.
Result<GroupJobs::Recorded*> GroupJobs::record(std::span<const GroupMember> members, bool fused) {
  Key key;
  std::vector<std::pair<int64_t, int64_t>> shapes;
  std::vector<int64_t> widths;
  for (const GroupMember& g : members) {
    key.emplace_back(g.weights, g.k, g.n, g.slice_k);
    shapes.emplace_back(g.k, g.n);
    widths.push_back(g.slice_k);
  }
  if (auto it = recorded_.find(key); it != recorded_.end()) return &it->second;
  bound();
  auto plan = executor_group_plan(dtype_, m_, shapes, cores_, widths, fused);
  if (!plan) return plan.error();
  if (fused && !plan->fused) return make_error(-ENOTSUP, fmt::format("the group's chosen plan at M = {} is not fused", m_));
  Recorded r;
  std::vector<matmul::Context*> raw;
  for (size_t j = 0; j < plan->plans.size(); ++j) {  // fused: one plan, on the members' one BO
    // Plan core c is physical core c (board_plan.cpp settle_chains).
    auto ctx = matmul::build_context(kmd_, plan->plans[j], *members[j].weights, {}, (1u << plan->plans[j].cores_used) - 1);
    if (!ctx) return ctx.error();
    if ((*ctx)->groups.size() != 1)
      return make_error(-ENOTSUP, fmt::format("{} x {} x {} runs in {} slice groups: not one chained job", m_,
                                              members[j].k, members[j].n, (*ctx)->groups.size()));
    r.contexts.push_back(std::move(*ctx));
    raw.push_back(r.contexts.back().get());
  }
  auto desc = matmul::chain_contexts(kmd_, raw);
  if (!desc) return desc.error();
  auto checked = kmd_.check(std::move(*desc));
  if (!checked) return checked.error();
  r.desc = std::move(*checked);
  return &recorded_.emplace(std::move(key), std::move(r)).first->second;
}

Result<std::unique_ptr<matmul::Job>> GroupJobs::launch_fused(std::span<const GroupMember> members,
                                                             std::span<const matmul::ColumnPart> columns) {
  auto r = record(members, true);
  if (!r) return r.error();
  auto job = std::make_unique<matmul::Job>(kmd_);
  if (auto s = job->add((*r)->contexts[0], members[0].a, columns); !s) return s.error();
  if (auto s = job->submit(&(*r)->desc); !s) return s.error();
  return job;
}

Result<std::unique_ptr<matmul::Job>> GroupJobs::launch(std::span<const GroupMember> members) {
  auto r = record(members, false);
  if (!r) return r.error();
  auto job = std::make_unique<matmul::Job>(kmd_);
  for (size_t j = 0; j < members.size(); ++j)
    if (auto s = job->add((*r)->contexts[j], members[j].a, members[j].c); !s) return s.error();
  if (auto s = job->submit(&(*r)->desc); !s) return s.error();
  return job;
}

}  // namespace ork::exec
