// Running a plan (executor.h).
#include "lib/exec/executor.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <new>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "lib/exec/chain_state.h"
#include "lib/exec/cpu_clock.h"
#include "lib/exec/device_calls.h"
#include "lib/exec/group_order.h"
#include "lib/exec/reads.h"
#include "lib/exec/start_queue.h"
#include "lib/exec/device_slots.h"
#include "lib/exec/windows.h"
#include "lib/io/tensor_reader.h"
#include "lib/matmul/job.h"

namespace ork::exec {
namespace {

int64_t now_ns() { return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

class Walk {
 public:
  Walk(const PackedModel& m, const ExecPlan& p, const PlanOptions& po, DeviceRef d, Slots& s, io::TensorReader& r,
       RunOutput& out, const Activation* first_input)
      : model_(m), d_(m.desc), plan_(p), po_(po), dev_(d), reader_(r), out_(out),
        chain_(m.desc, po.m, static_cast<int>(po.tokens), first_input, out.chain.outputs), calls_(m, po, d, s, p.fusion),
        jobs_(p, m.desc) {
    out_.chain.prints.assign(static_cast<size_t>(po.tokens),
                             std::vector<uint64_t>(static_cast<size_t>(d_.layers) * d_.matmuls.size(), 0));
  }

  // The walk of the order, on the calling thread, with the model's semantics (lib/sched
  // simulate.h): a load is handed to the I/O thread, a start to the device thread (both
  // return at once). A wait blocks only when something needs what it frees: a load into the
  // slot its program read (the slot is reused only after that program completed), and the
  // end of the run; so starts after a wait in the order still reach the device thread while
  // the program waited for runs. The sequential order blocks at every wait (the baseline).
  Status run() {
    last_token_end_ = t_start_ = now_ns();
    std::thread device([this] { device_loop(); });
    Status walked;
    try {
      walked = walk_order();
    } catch (const std::exception& e) {  // std::bad_alloc (a large M) or another: the run's error
      walked = make_error(dynamic_cast<const std::bad_alloc*>(&e) ? -ENOMEM : -EIO, fmt::format("walking the order ({}): {}", rows(), e.what()));
    }
    {
      std::lock_guard lk(mu_);
      stop_ = true;
      cv_job_.notify_one();
    }
    device.join();
    out_.stats.wall_ns = now_ns() - t_start_;
    return failed_ ? Status(error_) : walked;
  }

 private:
  std::string rows() const { return fmt::format("M = {} rows, hidden {}", po_.m, d_.hidden); }

  // The calling thread's part of run(): the order, up to the last wait.
  Status walk_order() {
    std::vector<int> unwaited;  // start ops whose wait the walk has passed without blocking
    bool ok = true;
    for (int op : plan_.order) {
      const Step& step = plan_.op_steps[static_cast<size_t>(op)];
      if (step.kind == Step::load) {
        ok = await_slot(unwaited, step.slot);
        if (!ok) break;
        reader_.submit(op, step.slot, load_ranges(model_, plan_, step));  // a fused member: its pieces
        ++out_.stats.loads;
      } else if (step.kind == Step::compute) {
        const std::vector<int> ops = jobs_.starts_with(op);  // none: a fused member, queued with its group
        std::lock_guard lk(mu_);
        jobs_.push(ops);
        cv_job_.notify_one();
      } else if (plan_.order_kind == Order::sequential) {  // the baseline: nothing overlaps
        ok = await(plan_.stream.ops[static_cast<size_t>(op)].partner);
        if (!ok) break;
      } else {
        unwaited.push_back(plan_.stream.ops[static_cast<size_t>(op)].partner);
      }
    }
    for (int start : unwaited)
      if (ok) ok = await(start);
    return Status::success();
  }

  // Blocks until the program of `start` completed (false: the run failed).
  bool await(int start) {
    std::unique_lock lk(mu_);
    awaited_ = start;  // no start comes until this returns: the device completes up to it
    cv_job_.notify_one();
    cv_done_.wait(lk, [&] { return failed_ || finished_.count(start) != 0; });
    awaited_ = -1;
    return !failed_;
  }
  // The passed waits of the programs that read `slot`, before a load overwrites it.
  bool await_slot(std::vector<int>& unwaited, int slot) {
    for (auto it = unwaited.begin(); it != unwaited.end();) {
      if (plan_.op_steps[static_cast<size_t>(*it)].slot != slot) {
        ++it;
        continue;
      }
      if (!await(*it)) return false;
      it = unwaited.erase(it);
    }
    return true;
  }

  // A matmul, or a group run as its board plan (group_job.h), from start to completion (the device thread's).
  struct Job {
    std::vector<int> ops;  // their start ops
    std::vector<std::vector<uint8_t>> c;
    std::vector<std::unique_ptr<matmul::Job>> npu;  // handed to the NPU (job.h), one per row piece; none: computed
    bool fused = false;  // one job of a fused group, its C's columns unpacked into c (fusion.h)
    int64_t begin_ns = 0;
  };

  // The device thread: starts matmuls in the order's start order, at most `depth_` on the
  // device at once, and completes them in that order. A start waits while a matmul it reads
  // (or any matmul of another layer) is still in flight; a completion happens when no start
  // can be made, or the walk waits for a program.
  // It catches what it calls (std::bad_alloc: a large M): the run's error, not std::terminate.
  void device_loop() {
    const CpuClock cpu(count_cpu_, &out_.stats.device_cpu_ns);  // ends before the walk joins this thread
    Status s;
    try {
      s = device_steps();
    } catch (const std::bad_alloc&) {
      s = make_error(-ENOMEM, fmt::format("out of host memory on the device thread (the activations of {})", rows()));
    } catch (const std::exception& e) {
      s = make_error(-EIO, fmt::format("the device thread failed: {}", e.what()));
    }
    if (s) return;
    for (Job& j : inflight_) std::for_each(j.npu.begin(), j.npu.end(), [](auto& piece) { piece->drain(); });
    std::lock_guard lk(mu_);
    failed_ = true, error_ = s.error();
    cv_done_.notify_all();
  }

  // device_loop's steps: success when the walk stopped it, else the first error.
  Status device_steps() {
    for (;;) {
      std::vector<int> ops;
      {
        std::unique_lock lk(mu_);
        cv_job_.wait(lk, [&] {
          return stop_ || walk_blocked() || (!jobs_.empty() && (!inflight_.empty() || group_here(jobs_.front())));
        });
        // A group goes whole once all its starts came; a start goes alone when the walk waits
        // for a program (its group's other starts come after; a fused group's never: start_queue.h).
        const bool whole = !jobs_.empty() && group_here(jobs_.front());
        if (!jobs_.empty() && (whole || (inflight_.empty() && (stop_ || walk_blocked()))) && can_start(jobs_.front())) {
          ops = take(whole);
        } else if (inflight_.empty()) {
          if (stop_) return {};  // (a start with nothing in flight can always be made: jobs_ is empty)
          continue;
        } else if (jobs_.empty() && !stop_ && !walk_blocked()) {
          continue;  // the walk got what it waited for: its next start may come before a completion
        }
      }
      if (Status s = !ops.empty() ? start(ops) : complete_front(); !s) return s;
    }
  }

  // The walk waits for a program not yet completed: no start comes until it is (mu_ held).
  bool walk_blocked() const { return awaited_ >= 0 && finished_.count(awaited_) == 0; }

  // A start may be made beside the matmuls in flight when there is room and it reads none
  // of them: they are of its own layer and not among its inputs or `after` (inputs of other
  // layers are whole layers' outputs, made at a layer's last completion).
  bool can_start(int op) const {
    if (static_cast<int>(inflight_.size()) >= depth_) return false;
    const Step& step = plan_.op_steps[static_cast<size_t>(op)];
    const MatmulDesc& md = d_.matmuls[static_cast<size_t>(step.matmul)];
    for (const Job& j : inflight_) {
      const Step& other = plan_.op_steps[static_cast<size_t>(j.ops.front())];
      if (other.token != step.token || other.layer != step.layer) return false;
      const std::string& name = d_.matmuls[static_cast<size_t>(other.matmul)].name;
      for (const auto* list : {&md.inputs, &md.after})
        for (const auto& s : *list)
          if (s == name) return false;
    }
    return true;
  }

  // Waits for the matmuls' weights (their loads' reads).
  Status await_weights(const std::vector<int>& ops) {
    for (int op : ops) {
      const int64_t w0 = now_ns();
      bool hit = false;
      const int load = plan_.load_of[static_cast<size_t>(op)];
      if (auto s = reader_.wait(load, &hit); !s) return s;
      out_.stats.wait_ns += now_ns() - w0;
      if (hit && load == op - 1) ++out_.stats.hits;  // a pinned tensor's later reads are no loads
    }
    return {};
  }
  Status start(const std::vector<int>& ops) {
    Status s = await_weights(ops);
    return s ? run_job(ops) : s;
  }
  // Makes the matmuls' A and runs them (cpu, or one in flight at most: blocking) or hands
  // them to the NPU: a group of several as one chained job.
  Status run_job(const std::vector<int>& ops) {
    std::vector<Activation> a(ops.size());
    for (size_t i = 0; i < ops.size(); ++i) {
      const Step& step = plan_.op_steps[static_cast<size_t>(ops[i])];
      a[i] = chain_.input(step.token, step.layer, step.matmul);
    }
    const Step& step = plan_.op_steps[static_cast<size_t>(ops.front())];
    Job job{.ops = ops, .c = std::vector<std::vector<uint8_t>>(ops.size()), .npu = {}, .begin_ns = now_ns()};
    if (depth_ <= 1) count_alone(step, dev_.on_npu() ? "one matmul in flight (inflight 1)" : "the cpu backend");
    Status s = depth_ <= 1 ? calls_.run(step.slot, step.layer, step.matmul, a[0], job.c[0]) : launch(a, job);
    if (!s) return failed_in(step, s);
    if (depth_ > 1 && !job.npu.empty()) {
      if (inflight_.empty()) busy_since_ = std::max(job.begin_ns, last_end_);
      inflight_.push_back(std::move(job));
      out_.stats.max_inflight = std::max(out_.stats.max_inflight, static_cast<int>(inflight_.size()));
      return {};
    }
    const int64_t end = now_ns();
    out_.stats.device_ns += end - job.begin_ns;
    out_.stats.max_inflight = std::max(out_.stats.max_inflight, 1);
    return finish(job, job.begin_ns, end);
  }

  Status failed_in(const Step& step, const Status& s) const {
    return make_error(s.error().code, fmt::format("token {} layer {} matmul \"{}\": {}", step.token, step.layer,
                                                  d_.matmuls[static_cast<size_t>(step.matmul)].name, s.error().message));
  }

  // The oldest matmul in flight: wait for it and use its C.
  Status complete_front() {
    Job job = std::move(inflight_.front());
    inflight_.pop_front();
    if (job.npu.size() == 2)
      if (std::vector<int> next = take_successor(job); !next.empty()) return complete_pipelined(std::move(job), next);
    const Step& step = plan_.op_steps[static_cast<size_t>(job.ops.front())];
    for (auto& piece : job.npu)  // in order: piece 0 is unpacked while the NPU runs piece 1
      if (auto s = piece->complete(); !s) return failed_in(step, s);
    const int64_t end = now_ns();
    if (inflight_.empty()) out_.stats.device_ns += end - busy_since_;
    // Jobs run one after another: from its submit or the previous one's end, whichever is later.
    const int64_t begin = std::max(job.begin_ns, last_end_);
    last_end_ = end;
    return finish(job, begin, end);
  }

  // The group after job's in its token's step (group_order.h), queued whole, in two pieces like
  // job: its starts, taken out of the queue; empty if none (overlap.h `pipelined`).
  std::vector<int> take_successor(const Job& job) {
    std::lock_guard lk(mu_);
    if (!groups_ || !inflight_.empty() || jobs_.empty()) return {};
    std::vector<int> ops = jobs_.group_queued(jobs_.front(), groups_);
    if (ops.empty()) return {};
    const Step& a = plan_.op_steps[static_cast<size_t>(job.ops.front())];
    const Step& b = plan_.op_steps[static_cast<size_t>(ops.front())];
    const bool first = order_.members(b.matmul).front() == b.matmul;  // not a start going alone
    const bool follows = a.token == b.token && order_.follows(a.layer, a.matmul, b.layer, b.matmul);
    if (!first || !follows || calls_.pieces(b.layer, field(ops, &Step::matmul)) != 2) return {};
    jobs_.remove(ops);
    return ops;
  }
  std::vector<int> field(const std::vector<int>& ops, int Step::*f) const {  // per op, its step's field
    std::vector<int> v(ops.size());
    std::transform(ops.begin(), ops.end(), v.begin(), [&](int op) { return plan_.op_steps[static_cast<size_t>(op)].*f; });
    return v;
  }

  // `job` in two pieces, then `next` (take_successor): next's piece p made (the same rows of
  // its sources, chain_state.h) and launched once job's piece p is unpacked, so the host's
  // work runs under the NPU's (docs/execution.md "Host and device overlapped").
  Status complete_pipelined(Job job, const std::vector<int>& next) {
    const Step& step = plan_.op_steps[static_cast<size_t>(job.ops.front())];
    const Step& ns = plan_.op_steps[static_cast<size_t>(next.front())];
    if (auto s = await_weights(next); !s) return s;
    const std::vector<int> matmuls = field(next, &Step::matmul), slots = field(next, &Step::slot), own = field(job.ops, &Step::matmul);
    const int64_t half = po_.m / 2;  // rows a piece
    Job nj{.ops = next, .c = std::vector<std::vector<uint8_t>>(next.size()), .npu = {}, .begin_ns = now_ns()};
    bool alone = false;  // next's plan does not chain (-ENOTSUP)
    for (int p = 0; p < 2; ++p) {
      if (auto s = job.npu[static_cast<size_t>(p)]->complete(); !s) return failed_in(step, s);
      for (size_t i = 0; i < own.size(); ++i)  // a group is one token's and layer's
        chain_.put(step.token, step.layer, own[i], job.c[i].data(), p * half, half);
      if (alone) continue;
      std::vector<Activation> a;
      for (int mm : matmuls) a.push_back(chain_.input_rows(ns.token, ns.layer, mm, p * half, half));
      auto piece = calls_.launch_piece(slots, ns.layer, matmuls, a, nj.c, p, 2);
      if (!piece && piece.error().code == -ENOTSUP && p == 0) alone = true;
      else if (!piece) return failed_in(ns, piece.error());
      else nj.npu.push_back(std::move(*piece));
    }
    const int64_t end = now_ns(), begin = std::max(job.begin_ns, last_end_);
    last_end_ = end;
    if (alone) {  // the NPU's busy time ends here; next runs as run_job runs it
      out_.stats.device_ns += end - busy_since_;
      Status f = finish(job, begin, end, true);
      return f ? run_job(next) : f;
    }
    inflight_.push_back(std::move(nj));  // the NPU stays busy: busy_since_ goes on
    out_.stats.max_group = std::max(out_.stats.max_group, static_cast<int>(next.size()));
    out_.stats.max_pieces = std::max(out_.stats.max_pieces, 2);
    ++out_.stats.pipelined;
    out_.stats.fused_groups += calls_.fused(ns.layer, matmuls.front()) ? 1 : 0;  // its pieces: one fused group job
    return finish(job, begin, end, true);
  }

  // The job's C are there: per matmul its fingerprint, its activation, and the layer's
  // output once all of the layer's matmuls are done; then the walk is told.
  // `put`: their activations already made from C, piece by piece (complete_pipelined).
  Status finish(const Job& job, int64_t begin, int64_t end, bool put = false) {
    for (size_t i = 0; i < job.ops.size(); ++i) {
      const Step& step = plan_.op_steps[static_cast<size_t>(job.ops[i])];
      const MatmulDesc& md = d_.matmuls[static_cast<size_t>(step.matmul)];
      if (want_trace_) out_.trace.push_back({fmt::format("{}.{}.{}", step.token, step.layer, md.name), 0, begin, end});
      out_.chain.prints[static_cast<size_t>(step.token)][static_cast<size_t>(step.layer) * d_.matmuls.size() +
                                                         static_cast<size_t>(step.matmul)] = fingerprint(job.c[i]);
      if (!put) chain_.put(step.token, step.layer, step.matmul, job.c[i].data(), 0, po_.m);
      if (chain_.done(step.token, step.layer)) {  // the token's last matmul
        const int64_t now = now_ns();
        out_.stats.token_ns.push_back(now - last_token_end_);
        last_token_end_ = now;
      }
      { std::lock_guard lk(mu_); finished_.insert(job.ops[i]); }
      cv_done_.notify_all();
      if (progress_) progress_(++computed_, plan_.computes);
    }
    return {};
  }

  // The job's matmuls handed to the NPU: a group as one chained job, else the one matmul
  // alone. A group whose plan does not chain runs blocking, one matmul after the other.
  Status launch(const std::vector<Activation>& a, Job& job) {
    const std::vector<int> slots = field(job.ops, &Step::slot), matmuls = field(job.ops, &Step::matmul);
    const int layer = plan_.op_steps[static_cast<size_t>(job.ops[0])].layer;  // a group is one layer's
    auto npu = !groups_ ? calls_.launch(slots[0], layer, matmuls[0], a[0], job.c[0]) : calls_.launch_group(slots, layer, matmuls, a, job.c, job.fused);
    if (npu) job.npu = std::move(*npu);
    if (npu) out_.stats.max_group = std::max(out_.stats.max_group, static_cast<int>(job.ops.size()));
    if (npu) out_.stats.max_pieces = std::max(out_.stats.max_pieces, static_cast<int>(job.npu.size()));
    if (npu && job.fused) ++out_.stats.fused_groups;
    for (const auto& j : job.npu) out_.stats.stacked_matmuls += j->stacked_matmuls();
    if (npu || npu.error().code != -ENOTSUP) return npu ? Status::success() : Status(npu.error());
    const char* why = !groups_ ? "group jobs off"
                      : job.ops.size() < order_.members(matmuls[0]).size() ? "a start went without its group" : "its plan does not chain";
    for (size_t i = 0; i < job.ops.size(); ++i) {
      count_alone(plan_.op_steps[static_cast<size_t>(job.ops[i])], why);
      if (auto s = calls_.run(slots[i], layer, matmuls[i], a[i], job.c[i]); !s) return s;
    }
    return {};
  }

  // A fused group whose members each ran its fused matmul alone, keeping their own columns
  // (DeviceCalls::run): counted once, at its first member, with why (RunStats::fused_alone).
  void count_alone(const Step& step, const char* why) {
    if (!calls_.fused(step.layer, step.matmul) || order_.members(step.matmul).front() != step.matmul) return;
    ++out_.stats.fused_alone;
    out_.stats.fused_alone_reason = why;
  }

  bool group_here(int front) const { return !jobs_.group_queued(front, groups_).empty(); }
  // Takes the front's group (whole) or the front alone out of the queue (mu_ held).
  std::vector<int> take(bool whole) {
    std::vector<int> ops = whole ? jobs_.group_queued(jobs_.front(), groups_) : std::vector<int>{jobs_.front()};
    jobs_.remove(ops);
    return ops;
  }

 public:
  bool want_trace_ = false;
  int depth_ = 1;  // matmuls on the device at once (RunOptions::inflight; 1 on cpu)
  bool groups_ = false, count_cpu_ = false;  // RunOptions::groups (NPU, depth > 1: chained jobs), ::count_cpu
  std::function<void(int64_t, int64_t)> progress_;

 private:
  const PackedModel& model_;
  const ModelDesc& d_;
  const ExecPlan& plan_;
  const PlanOptions& po_;
  DeviceRef dev_;
  io::TensorReader& reader_;
  RunOutput& out_;
  ChainState chain_;
  DeviceCalls calls_;
  const GroupOrder order_{d_};
  int64_t t_start_ = 0, last_token_end_ = 0;
  std::mutex mu_;
  std::condition_variable cv_job_, cv_done_;
  StartQueue jobs_;  // the starts handed to the device thread (mu_)
  std::set<int> finished_;
  bool stop_ = false, failed_ = false;
  int awaited_ = -1;  // the start op whose program the walk is blocked on, or -1
  // The device thread's own:
  std::deque<Job> inflight_;   // handed to the NPU, in submission order
  int64_t busy_since_ = 0;     // when inflight_ last became non-empty
  int64_t last_end_ = 0;       // the last completion
  int64_t computed_ = 0;
  Error error_;
};

}  // namespace

Result<RunOutput> run_plan(const std::string& path, const PackedModel& model, const ExecPlan& plan,
                           const PlanOptions& po, DeviceRef dev, const RunOptions& options) {
  if (plan.slot_total > slot_limit(po))  // the budget, or the NPU window when that is smaller
    return make_error(-EINVAL, fmt::format("the plan's slots take {} bytes, over the budget of {}", plan.slot_total,
                                           slot_limit(po)));
  if (dev.on_npu() && (dev.kmd == nullptr || dev.runner == nullptr))
    return make_error(-EINVAL, "a device needs both its kmd and runner");
  if (options.inflight < 1 || options.inflight > 8)
    return make_error(-EINVAL, fmt::format("inflight = {}: must be 1..8 matmuls on the device at once", options.inflight));
  auto windows = place_windows(model, plan, po);  // a layer's BOs and jobs in one NPU window
  if (!windows) return windows.error();
  auto slots = allocate_slots(plan, dev, windows->slot_window);
  if (!slots) return slots.error();
  auto reader = io::TensorReader::open(path, slots->spans, options.io_rate_cap_bytes_per_ns,
                                      options.file_os != nullptr ? *options.file_os : io::real_file_os());
  if (!reader) return reader.error();
  RunOutput out;
  out.stats.budget_bytes = po.budget_bytes;
  out.stats.peak_bytes = plan.slot_total;
  out.stats.windows = windows->windows;
  for (size_t t = 0; t < plan.fusion.first.size(); ++t)  // a group's first member at its buffer's start
    out.stats.fused_planned += plan.fusion.fused(t) && plan.fusion.offset[t] == 0 ? po.tokens : 0;
  Status st;
  {
    Walk walk(model, plan, po, dev, *slots, **reader, out, options.first_input);
    walk.want_trace_ = options.want_trace;
    walk.depth_ = dev.on_npu() ? options.inflight : 1;
    walk.groups_ = options.groups && walk.depth_ > 1;
    walk.progress_ = options.progress, walk.count_cpu_ = options.count_cpu;
    st = walk.run();
  }
  account_reads(**reader, plan, model.desc, options.want_trace, out);
  reader->reset();  // joins the I/O thread before the slots go
  if (!st) return st.error();
  return out;
}

}  // namespace ork::exec
