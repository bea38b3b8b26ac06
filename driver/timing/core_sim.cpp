// Cores as timelines with a shared DRAM limit (core_sim.h): a small fluid simulation.
// Each core walks phases: the submit's fixed cost, then per task a fixed cost, a DRAM
// phase and the MACs that do not hide under it. Between events the rates are constant, so the next event is exact.
#include "driver/timing/core_sim.h"

#include <algorithm>
#include <limits>

namespace ork::timing {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct CoreState {
  const CoreWork* work = nullptr;
  double start = 0;
  // 0 = the submit; then per task i three phases: 3i+1 its fixed cost (plus a submit when
  // each task is its own), 3i+2 its DRAM phase, 3i+3 its MACs past the resident rows.
  size_t phase = 0;
  double left = 0;       // ns (fixed and compute phases) or bytes (DRAM phases)
  double cap = 0;        // DRAM phase: the core's own ceiling, bytes per ns
  double end = -1;       // set when done

  bool done() const { return end >= 0; }
  bool dram() const { return phase > 0 && phase % 3 == 2; }
  const TaskDemand& task() const { return work->tasks[(phase - 1) / 3]; }
  size_t phases() const { return work->given_ns >= 0 ? 1 : 1 + 3 * work->tasks.size(); }
};

// Loads phase `s.phase` (skipping empty ones); marks the core done after the last at `t`.
void enter_phase(CoreState& s, double t, const TimingParams& p) {
  for (; s.phase < s.phases(); ++s.phase) {
    if (s.phase == 0) {
      s.left = s.work->given_ns >= 0 ? s.work->given_ns : s.work->submit_per_task ? 0 : p.submit_ns;
    } else if (s.phase % 3 == 1) {
      s.left = p.task_ns + (s.work->submit_per_task ? p.submit_ns : 0);
    } else if (s.phase % 3 == 0) {
      s.left = serial_ns(s.task(), p);
    } else {
      const TaskDemand& d = s.task();
      const double io = d.feature_bytes + d.output_bytes;
      // No faster than the MACs under the weight stream, then the feature/output bytes.
      const double min_ns = compute_ns(d, p) + io / p.core_dma_bytes_per_ns;
      s.left = d.dram_bytes();
      s.cap = min_ns > 0 ? std::min(p.core_dma_bytes_per_ns, s.left / min_ns) : p.core_dma_bytes_per_ns;
    }
    if (s.left > 0) return;
  }
  s.end = t;
}

// The buffers of one simulation, reused at every event: a simulation has three events per
// task, and one allocation per buffer per event was most of its time under AddressSanitizer
// (CI's build-san; docs/reliability.md "CI time"). Kept per thread across simulations too:
// mc_prof's fit runs millions of small ones (docs/reliability.md "CI time").
struct Scratch {
  std::vector<CoreState> cores;
  std::vector<double> caps;   // the ceilings of the cores in a DRAM phase, in core order
  std::vector<size_t> who;    // their core indices
  std::vector<size_t> order;  // water_fill's order of those ceilings
  std::vector<double> share;  // water_fill's result, one per ceiling
  std::vector<double> rate;   // dram_rates' result, one per core
};

// Fair shares of `total` among ceilings `caps` (water-filling): each ceiling's rate into
// `rate`.
void water_fill(const std::vector<double>& caps, double total, std::vector<size_t>& order,
                std::vector<double>& rate) {
  order.resize(caps.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return caps[a] < caps[b]; });
  rate.assign(caps.size(), 0.0);
  double left = total;
  for (size_t i = 0; i < order.size(); ++i) {
    const double share = left / static_cast<double>(order.size() - i);
    rate[order[i]] = std::min(caps[order[i]], share);
    left -= rate[order[i]];
  }
}

// Rates of the cores now in a DRAM phase (0 for the others), into `x.rate`.
void dram_rates(const std::vector<CoreState>& cores, double t, double total, Scratch& x) {
  x.caps.clear();
  x.who.clear();
  for (size_t i = 0; i < cores.size(); ++i) {
    if (!cores[i].done() && cores[i].start <= t && cores[i].dram()) {
      x.caps.push_back(cores[i].cap);
      x.who.push_back(i);
    }
  }
  x.rate.assign(cores.size(), 0.0);
  water_fill(x.caps, total, x.order, x.share);
  for (size_t j = 0; j < x.who.size(); ++j) x.rate[x.who[j]] = x.share[j];
}

}  // namespace

std::vector<double> simulate_cores(std::span<const CoreWork> work, std::span<const double> start_ns,
                                   const TimingParams& p) {
  thread_local Scratch scratch;  // a simulation calls nothing that simulates
  std::vector<CoreState>& cores = scratch.cores;
  cores.assign(work.size(), CoreState{});
  double t = kInf;
  for (size_t i = 0; i < work.size(); ++i) {
    cores[i].work = &work[i];
    cores[i].start = i < start_ns.size() ? start_ns[i] : 0;
    t = std::min(t, cores[i].start);
    enter_phase(cores[i], cores[i].start, p);
  }
  for (;;) {
    dram_rates(cores, t, p.shared_dram_bytes_per_ns, scratch);
    const std::vector<double>& rate = scratch.rate;
    double dt = kInf;  // to the next event: a phase ends or a core starts
    for (size_t i = 0; i < cores.size(); ++i) {
      const CoreState& s = cores[i];
      if (s.done()) continue;
      if (s.start > t) dt = std::min(dt, s.start - t);
      else dt = std::min(dt, s.dram() ? s.left / rate[i] : s.left);
    }
    if (dt == kInf) break;  // every core done
    t += dt;
    for (size_t i = 0; i < cores.size(); ++i) {
      CoreState& s = cores[i];
      if (s.done() || s.start >= t) continue;  // not running during this step
      s.left -= s.dram() ? rate[i] * dt : dt;
      // Relative tolerance: the phase that set dt ends exactly, up to rounding.
      if (s.left <= 1e-9 * (s.dram() ? s.task().dram_bytes() : 1.0) + 1e-9) {
        ++s.phase;
        enter_phase(s, t, p);
      }
    }
  }
  std::vector<double> ends(cores.size());
  for (size_t i = 0; i < cores.size(); ++i) ends[i] = cores[i].end;
  return ends;
}

}  // namespace ork::timing
