// Running a plan (executor.h).
#include "lib/exec/executor.h"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "lib/exec/reader.h"
#include "lib/exec/synthetic.h"
#include "lib/exec/unpack.h"
#include "lib/io/slot_buffer.h"

namespace ork::exec {
namespace {

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// The slots: BOs on a device, host buffers on the cpu backend, allocated once.
struct Slots {
  std::vector<std::unique_ptr<driver::Bo>> bos;
  std::vector<io::SlotBuffer> host;
  std::vector<std::span<std::byte>> spans;
};

Result<Slots> allocate_slots(const ExecPlan& plan, const DeviceRef& dev) {
  Slots s;
  for (uint64_t bytes : plan.slot_bytes) {
    if (dev.kmd != nullptr) {
      auto bo = dev.kmd->bo_create(bytes, driver::BoUsage::data);
      if (!bo) return make_error(bo.error().code, fmt::format("allocating a {}-byte weight slot: {}", bytes, bo.error().message));
      s.spans.emplace_back(reinterpret_cast<std::byte*>((*bo)->map()), bytes);
      s.bos.push_back(std::move(*bo));
    } else {
      auto b = io::SlotBuffer::allocate(bytes);
      if (!b) return b.error();
      s.spans.emplace_back(b->data(), bytes);
      s.host.push_back(std::move(*b));
    }
  }
  return s;
}

class Walk {
 public:
  Walk(const PackedModel& m, const ExecPlan& p, const PlanOptions& po, DeviceRef d, Slots& s, TensorReader& r,
       RunOutput& out)
      : model_(m), d_(m.desc), plan_(p), po_(po), dev_(d), slots_(s), reader_(r), out_(out) {
    out_.chain.prints.assign(static_cast<size_t>(po.tokens),
                             std::vector<uint64_t>(static_cast<size_t>(d_.layers) * d_.matmuls.size(), 0));
    out_.chain.outputs.resize(static_cast<size_t>(po.tokens));
    done_.assign(static_cast<size_t>(po.tokens), std::vector<size_t>(static_cast<size_t>(d_.layers), 0));
  }
  ~Walk() {
    for (auto& [key, w] : views_) dev_.runner->forget(*w);
  }

  // The walk of the order, on the calling thread, with the model's semantics (lib/sched
  // simulate.h): a load is handed to the I/O thread, a start to the device thread (both
  // return at once), a wait blocks until that program has run.
  Status run(const RunOptions& options) {
    last_token_end_ = t_start_ = now_ns();
    std::thread device([this, &options] { device_loop(options); });
    Status st;
    for (int op : plan_.order) {
      const Step& step = plan_.op_steps[static_cast<size_t>(op)];
      if (step.kind == Step::load) {
        const PackedTensor& t = model_.tensor(step.layer, step.matmul);
        reader_.submit(op, step.slot, t.offset, t.bytes);
        ++out_.stats.loads;
      } else if (step.kind == Step::compute) {
        std::lock_guard lk(mu_);
        jobs_.push_back(op);
        cv_job_.notify_one();
      } else {
        std::unique_lock lk(mu_);
        cv_done_.wait(lk, [&] { return failed_ || finished_.count(op - 1) != 0; });
        if (failed_) break;
      }
    }
    {
      std::lock_guard lk(mu_);
      stop_ = true;
      cv_job_.notify_one();
    }
    device.join();
    out_.stats.wall_ns = now_ns() - t_start_;
    if (failed_) return error_;
    return st;
  }

 private:
  void device_loop(const RunOptions& options) {
    const int64_t total = static_cast<int64_t>(plan_.order.size() / 3);
    int64_t computed = 0;
    for (;;) {
      int op;
      {
        std::unique_lock lk(mu_);
        cv_job_.wait(lk, [&] { return stop_ || !jobs_.empty(); });
        if (jobs_.empty()) return;
        op = jobs_.front();
        jobs_.pop_front();
      }
      const Status s = compute(op - 1, plan_.op_steps[static_cast<size_t>(op)]);  // the load is the op before its start
      {
        std::lock_guard lk(mu_);
        if (!s) {
          failed_ = true;
          error_ = s.error();
        }
        finished_.insert(op);
      }
      cv_done_.notify_all();
      if (!s) return;
      if (options.progress) options.progress(++computed, total);
    }
  }

  using Acts = std::vector<Activation>;

  const Activation& x_of(int t, int l) {
    auto key = std::make_pair(t, l);
    if (auto it = x_.find(key); it != x_.end()) return it->second;
    Activation x;
    if (l == 0) {
      x = (t == 0 && first_input_ != nullptr) ? *first_input_ : token_input(d_, po_.m, t);
      if (t > 0) {  // autoregressive: token t-1's output is part of token t's input
        const Activation& prev = finished(t - 1) ? out_.chain.outputs[static_cast<size_t>(t - 1)] : x_of(t - 1, d_.layers);
        const Activation* src[] = {&x, &prev};
        Activation sum;
        combine(d_.dtype, src, sum);
        x = std::move(sum);
      }
    } else {
      std::vector<const Activation*> src;
      for (const auto& s : d_.output) src.push_back(source(t, l - 1, s));
      combine(d_.dtype, src, x);
    }
    return x_.emplace(key, std::move(x)).first->second;
  }
  bool finished(int t) const { return static_cast<int>(out_.stats.token_ns.size()) > t; }
  const Activation* source(int t, int l, const std::string& s) {
    if (s == "x") return &x_of(t, l);
    return &acts_[{t, l}][static_cast<size_t>(d_.find(s))];
  }

  Status compute(int load_op, const Step& step) {
    const int64_t w0 = now_ns();
    bool hit = false;
    if (auto s = reader_.wait(load_op, &hit); !s) return s;
    const int64_t w1 = now_ns();
    out_.stats.wait_ns += w1 - w0;
    if (hit) ++out_.stats.hits;
    const MatmulDesc& md = d_.matmuls[static_cast<size_t>(step.matmul)];
    std::vector<const Activation*> src;
    for (const auto& s : md.inputs) src.push_back(source(step.token, step.layer, s));
    Activation a;
    combine(d_.dtype, src, a);
    std::vector<uint8_t> c;
    const int64_t c0 = now_ns();
    if (auto s = matmul(step, md, a, c); !s)
      return make_error(s.error().code, fmt::format("token {} layer {} matmul \"{}\": {}", step.token, step.layer, md.name,
                                                    s.error().message));
    if (dev_.timing_only)  // the device's part at its modelled board time (the start op's cycles = ns)
      std::this_thread::sleep_for(std::chrono::nanoseconds(plan_.stream.ops[static_cast<size_t>(load_op) + 1].cycles));
    const int64_t c1 = now_ns();
    out_.stats.device_ns += c1 - c0;
    if (want_trace_) out_.trace.push_back({fmt::format("{}.{}.{}", step.token, step.layer, md.name), 0, c0, c1});
    out_.chain.prints[static_cast<size_t>(step.token)][static_cast<size_t>(step.layer) * d_.matmuls.size() +
                                                       static_cast<size_t>(step.matmul)] = fingerprint(c);
    Acts& acts = acts_[{step.token, step.layer}];
    acts.resize(d_.matmuls.size());
    requantise(d_.dtype, c.data(), po_.m, md.n, md.shift, acts[static_cast<size_t>(step.matmul)]);
    if (++done_[static_cast<size_t>(step.token)][static_cast<size_t>(step.layer)] == d_.matmuls.size())
      layer_done(step.token, step.layer);
    return {};
  }

  // Every matmul of (t, l) ran: make the next layer's input and drop what nobody reads now.
  void layer_done(int t, int l) {
    const Activation next = x_of(t, l + 1);
    acts_.erase({t, l});
    x_.erase({t, l});
    if (l + 1 == d_.layers) {
      out_.chain.outputs[static_cast<size_t>(t)] = next;
      x_.erase({t, l + 1});
      const int64_t now = now_ns();
      out_.stats.token_ns.push_back(now - last_token_end_);
      last_token_end_ = now;
    }
  }

  Status matmul(const Step& step, const MatmulDesc& md, const Activation& a, std::vector<uint8_t>& c) {
    std::span<std::byte> slot = slots_.spans[static_cast<size_t>(step.slot)];
    const PackedTensor& t = model_.tensor(step.layer, step.matmul);
    if (dev_.kmd == nullptr) {  // cpu: the reference's fast path on the unpacked slot
      std::vector<uint8_t> w;
      if (auto s = unpack_weights(d_.dtype, md.k, md.n, {reinterpret_cast<const uint8_t*>(slot.data()), t.bytes}, w); !s)
        return s;
      return reference_matmul(d_.dtype, a, w, md.k, md.n, c);
    }
    const driver::Bo& bo = *slots_.bos[static_cast<size_t>(step.slot)];
    if (auto s = dev_.kmd->bo_sync(bo, driver::SyncDir::to_device); !s) return s;  // the read wrote it from the CPU
    auto key = std::make_tuple(step.slot, md.k, md.n);
    auto it = views_.find(key);
    if (it == views_.end()) {
      auto w = matmul::ResidentWeights::view(bo, d_.dtype, md.k, md.n);
      if (!w) return w.error();
      it = views_.emplace(key, std::move(*w)).first;
    }
    const std::vector<uint8_t> op = operand_bytes(d_.dtype, a);
    c.resize(static_cast<size_t>(output_bytes(po_.m, md.n)));
    matmul::RunOptions ro;
    ro.cores = dev_.cores;
    return dev_.runner->run(*it->second, op.data(), po_.m, c.data(), ro);
  }

 public:
  bool want_trace_ = false;
  const Activation* first_input_ = nullptr;

 private:
  const PackedModel& model_;
  const ModelDesc& d_;
  const ExecPlan& plan_;
  const PlanOptions& po_;
  DeviceRef dev_;
  Slots& slots_;
  TensorReader& reader_;
  RunOutput& out_;
  std::map<std::pair<int, int>, Acts> acts_;
  std::map<std::pair<int, int>, Activation> x_;
  std::vector<std::vector<size_t>> done_;
  std::map<std::tuple<int, int64_t, int64_t>, std::unique_ptr<matmul::ResidentWeights>> views_;
  int64_t t_start_ = 0, last_token_end_ = 0;
  std::mutex mu_;
  std::condition_variable cv_job_, cv_done_;
  std::deque<int> jobs_;
  std::set<int> finished_;
  bool stop_ = false, failed_ = false;
  Error error_;
};

}  // namespace

Result<RunOutput> run_plan(const std::string& path, const PackedModel& model, const ExecPlan& plan,
                           const PlanOptions& po, DeviceRef dev, const RunOptions& options) {
  if (plan.slot_total > po.budget_bytes)
    return make_error(-EINVAL, fmt::format("the plan's slots take {} bytes, over the budget of {}", plan.slot_total,
                                           po.budget_bytes));
  if ((dev.kmd == nullptr) != (dev.runner == nullptr)) return make_error(-EINVAL, "a device needs both its kmd and runner");
  auto slots = allocate_slots(plan, dev);
  if (!slots) return slots.error();
  if (dev.timing_only && dev.kmd == nullptr) return make_error(-EINVAL, "a timing-only run needs the emulated NPU");
  auto reader = TensorReader::open(path, slots->spans, options.io_rate_cap_bytes_per_ns);
  if (!reader) return reader.error();
  RunOutput out;
  out.stats.budget_bytes = po.budget_bytes;
  out.stats.peak_bytes = plan.slot_total;
  Status st;
  {
    Walk walk(model, plan, po, dev, *slots, **reader, out);
    walk.want_trace_ = options.want_trace;
    walk.first_input_ = options.first_input;
    st = walk.run(options);
  }
  for (const auto& t : (*reader)->timings()) {
    out.stats.io_ns += t.end_ns - t.begin_ns;
    if (options.want_trace) {
      const Step& s = plan.op_steps[static_cast<size_t>(t.id)];
      out.trace.push_back({fmt::format("load {}.{}.{}", s.token, s.layer, model.desc.matmuls[static_cast<size_t>(s.matmul)].name),
                           1, t.begin_ns, t.end_ns});
    }
  }
  out.stats.bytes_read = (*reader)->bytes_read();
  const ReaderInfo& info = (*reader)->info();
  out.stats.engine = info.engine;
  out.stats.direct = info.direct;
  out.stats.registered = info.registered;
  out.stats.fallbacks = info.fallbacks;
  reader->reset();  // joins the I/O thread before the slots go
  if (!st) return st.error();
  return out;
}

std::string trace_json(const std::vector<TraceEvent>& events) {
  int64_t origin = events.empty() ? 0 : events.front().begin_ns;
  for (const auto& e : events) origin = std::min(origin, e.begin_ns);
  std::string s = "{\"traceEvents\":[\n";
  s += "{\"ph\":\"M\",\"pid\":1,\"tid\":0,\"name\":\"thread_name\",\"args\":{\"name\":\"compute\"}},\n";
  s += "{\"ph\":\"M\",\"pid\":1,\"tid\":1,\"name\":\"thread_name\",\"args\":{\"name\":\"io\"}}";
  for (const auto& e : events)
    s += fmt::format(",\n{{\"ph\":\"X\",\"pid\":1,\"tid\":{},\"name\":\"{}\",\"ts\":{:.3f},\"dur\":{:.3f}}}", e.thread, e.name,
                     static_cast<double>(e.begin_ns - origin) / 1e3, static_cast<double>(e.end_ns - e.begin_ns) / 1e3);
  s += "\n]}\n";
  return s;
}

}  // namespace ork::exec
