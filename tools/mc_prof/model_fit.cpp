// The timing model against measured figures (model_fit.h).
#include "tools/mc_prof/model_fit.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "driver/timing/core_sim.h"
#include "lib/matmul/plan.h"

namespace ork::tools {
namespace {

// The published experiment's layout: tiles of mc rows dealt round-robin to the cores, each
// tile one submit of one task streaming all the weights.
std::vector<timing::CoreWork> per_tile_work(const Setup& s, int64_t m) {
  std::vector<timing::CoreWork> work(static_cast<size_t>(s.cores));
  for (int c = 0; c < s.cores; ++c) work[static_cast<size_t>(c)].core = c, work[static_cast<size_t>(c)].submit_per_task = true;
  int64_t tile = 0;
  for (int64_t m0 = 0; m0 < m; m0 += s.mc, ++tile)
    work[static_cast<size_t>(tile % s.cores)].tasks.push_back(timing::int8_tile_demand(std::min(s.mc, m - m0), s.k, s.n));
  return work;
}

// libork's plan: each core's tasks chained into one submit.
std::vector<timing::CoreWork> chained_work(const Setup& s, int64_t m) {
  auto plan = matmul::make_plan({m, s.k, s.n}, {.dtype = matmul::DType::int8, .cores = s.cores, .mc_cap = s.mc});
  if (!plan) return {};
  std::vector<timing::CoreWork> work(static_cast<size_t>(plan->cores_used));
  for (size_t c = 0; c < work.size(); ++c) work[c].core = static_cast<int>(c);
  for (const matmul::Task& t : plan->tasks)
    work[static_cast<size_t>(t.core)].tasks.push_back(timing::make_demand(
        {.mc = t.mc, .kt = t.kt, .cols = t.nt, .weight_bytes = static_cast<double>(t.kt * t.nt),
         .row_bytes = static_cast<double>(t.kt), .out_elem_bytes = static_cast<double>(plan->out_bytes())}));
  return work;
}

// The parameters fitted, as an unconstrained vector: logs of the positive ones, the logit
// of the efficiency (0..1).
using Vec = std::array<double, 4>;
Vec to_vec(const timing::TimingParams& p) {
  const double e = std::clamp(p.serial_mac_efficiency, 1e-6, 1 - 1e-6);
  return {std::log(std::max(p.task_ns, 1.0)), std::log(p.core_dma_bytes_per_ns), std::log(p.shared_dram_bytes_per_ns),
          std::log(e / (1 - e))};
}
timing::TimingParams from_vec(const Vec& v, timing::TimingParams p) {
  p.task_ns = std::exp(v[0]);
  p.core_dma_bytes_per_ns = std::exp(v[1]);
  p.shared_dram_bytes_per_ns = std::exp(v[2]);
  p.serial_mac_efficiency = 1 / (1 + std::exp(-v[3]));
  return p;
}

// What a setup runs at M = `m` (for a setup whose M is unknown): the cores' tasks, which do
// not depend on the parameters. Empty when the setup cannot be planned.
std::vector<timing::CoreWork> setup_work(const Setup& s, int64_t m) {
  const int64_t rows = s.m_unknown ? m : s.m;
  if (rows < 1 || s.cores < 1 || (s.per_tile && s.mc < 1)) return {};
  return s.per_tile ? per_tile_work(s, rows) : chained_work(s, rows);
}

// Modelled us of `work` under `p`: the last core's end.
double work_us(std::span<const timing::CoreWork> work, const timing::TimingParams& p) {
  if (work.empty()) return 0;
  double last = 0;
  for (double end : timing::simulate_cores(work, {}, p)) last = std::max(last, end);
  return last / 1000;
}

// The figures of one fit at one M, their work built once: the fit evaluates the loss
// thousands of times with other parameters and the same work (each figure's tasks and its
// plan rebuilt per evaluation were a quarter of its CPU time, docs/reliability.md "CI time").
struct FitFigure {
  std::vector<timing::CoreWork> work;
  double published_us = 0;
};

std::vector<FitFigure> fit_figures(std::span<const Figure> figures, int64_t m) {
  std::vector<FitFigure> out;
  out.reserve(figures.size());
  for (const Figure& f : figures) out.push_back({setup_work(f.setup, m), f.published_us});
  return out;
}

double loss(std::span<const FitFigure> figures, const timing::TimingParams& p) {
  double sum = 0;
  for (const FitFigure& f : figures) {
    const double us = work_us(f.work, p);
    if (!(us > 0)) return INFINITY;
    const double e = std::log(us / f.published_us);
    sum += e * e;
  }
  return sum;
}

// Nelder-Mead (reflection 1, expansion 2, contraction 1/2, shrink 1/2) from `x0`.
template <typename F>
Vec nelder_mead(F&& f, const Vec& x0, double& best) {
  constexpr size_t n = 4;
  std::array<Vec, n + 1> x;
  std::array<double, n + 1> y;
  for (size_t i = 0; i <= n; ++i) {
    x[i] = x0;
    if (i > 0) x[i][i - 1] += 0.2;
    y[i] = f(x[i]);
  }
  auto along = [](const Vec& c, const Vec& w, double t) {
    Vec r;
    for (size_t j = 0; j < n; ++j) r[j] = c[j] + t * (w[j] - c[j]);
    return r;
  };
  for (int it = 0; it < 2000; ++it) {
    std::array<size_t, n + 1> o;
    for (size_t i = 0; i <= n; ++i) o[i] = i;
    std::sort(o.begin(), o.end(), [&](size_t a, size_t b) { return y[a] < y[b]; });
    const size_t lo = o[0], hi = o[n], second = o[n - 1];
    if (y[hi] - y[lo] < 1e-14) break;
    Vec c{};
    for (size_t i = 0; i <= n; ++i)
      if (i != hi)
        for (size_t j = 0; j < n; ++j) c[j] += x[i][j] / n;
    const Vec r = along(c, x[hi], -1);
    const double yr = f(r);
    if (yr < y[lo]) {
      const Vec e = along(c, x[hi], -2);
      const double ye = f(e);
      x[hi] = ye < yr ? e : r, y[hi] = std::min(ye, yr);
    } else if (yr < y[second]) {
      x[hi] = r, y[hi] = yr;
    } else {
      const Vec k = along(c, x[hi], 0.5);
      const double yk = f(k);
      if (yk < y[hi]) {
        x[hi] = k, y[hi] = yk;
      } else {
        for (size_t i = 0; i <= n; ++i)
          if (i != lo) x[i] = along(x[lo], x[i], 0.5), y[i] = f(x[i]);
      }
    }
  }
  size_t lo = 0;
  for (size_t i = 1; i <= n; ++i)
    if (y[i] < y[lo]) lo = i;
  best = y[lo];
  return x[lo];
}

}  // namespace

double modelled_us(const Setup& s, const timing::TimingParams& p, int64_t m) { return work_us(setup_work(s, m), p); }

timing::TimingParams fit_start() {
  timing::TimingParams p;
  p.task_ns = 100000;
  p.core_dma_bytes_per_ns = 10;
  p.shared_dram_bytes_per_ns = 20;
  p.serial_mac_efficiency = 0.5;
  return p;
}

FitResult fit(std::span<const Figure> figures, const timing::TimingParams& start) {
  const bool any_unknown = std::any_of(figures.begin(), figures.end(), [](const Figure& f) { return f.setup.m_unknown; });
  FitResult best;
  best.loss = INFINITY;
  for (int64_t m = any_unknown ? 384 : 0; m <= (any_unknown ? 1024 : 0); m += 32) {
    double y = 0;
    const std::vector<FitFigure> at_m = fit_figures(figures, m);
    const auto f = [&](const Vec& x) { return loss(at_m, from_vec(x, start)); };
    const Vec v = nelder_mead(f, nelder_mead(f, to_vec(start), y), y);  // restarted: a fresh simplex
    if (y < best.loss) best = {from_vec(v, start), m, y};
  }
  return best;
}

double error_percent(double modelled, double measured) { return 100.0 * (modelled - measured) / measured; }

Spread3 abs_spread(const std::vector<double>& errors, const std::vector<std::string>& names) {
  Spread3 s;
  if (errors.empty()) return s;
  std::vector<double> a;
  size_t worst = 0;
  for (size_t i = 0; i < errors.size(); ++i) {
    a.push_back(std::abs(errors[i]));
    if (a[i] > a[worst]) worst = i;
  }
  s.worst = worst < names.size() ? names[worst] : "";
  std::sort(a.begin(), a.end());
  s.min = a.front(), s.max = a.back();
  s.median = a.size() % 2 ? a[a.size() / 2] : (a[a.size() / 2 - 1] + a[a.size() / 2]) / 2;
  return s;
}

std::vector<Judged> judge(std::span<const Figure> figures, const FitResult& model, bool loo) {
  std::vector<Judged> out;
  for (size_t i = 0; i < figures.size(); ++i) {
    Judged j;
    j.figure = &figures[i];
    j.modelled_us = modelled_us(figures[i].setup, model.params, model.experiment_m);
    j.error_percent = error_percent(j.modelled_us, figures[i].published_us);
    if (loo) {
      std::vector<Figure> rest;
      for (size_t k = 0; k < figures.size(); ++k)
        if (k != i) rest.push_back(figures[k]);
      const FitResult f = fit(rest);
      j.loo_modelled_us = modelled_us(figures[i].setup, f.params, f.experiment_m);
      j.loo_error_percent = error_percent(j.loo_modelled_us, figures[i].published_us);
    }
    out.push_back(j);
  }
  return out;
}

}  // namespace ork::tools
