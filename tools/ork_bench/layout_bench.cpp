// Layout timings (layout_bench.h) for the decode shape M=1, K=N=2048 and M=512, K=N=2048, and
// the int8 pack of A on two threads against one at M = 512..8192, K = 2048.
#include "tools/ork_bench/layout_bench.h"

#include <fmt/core.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <thread>

#include "lib/matmul/layout.h"
#include "lib/matmul/layout_host.h"
#include "lib/matmul/plan.h"
#include "lib/ref/workers.h"

namespace ork::bench {
namespace {

using matmul::DType;
using matmul::Plan;

// Best time of `reps` rounds, each round the mean of enough calls to last >= 2 ms.
template <class F>
double best_us(int reps, F&& f) {
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    int calls = 0;
    const auto t0 = std::chrono::steady_clock::now();
    std::chrono::duration<double> dt{};
    do {
      f();
      ++calls;
      dt = std::chrono::steady_clock::now() - t0;
    } while (dt.count() < 2e-3);
    best = std::min(best, dt.count() / calls * 1e6);
  }
  return best;
}

void naive_pack_a(const std::vector<int8_t>& a, const Plan& p, std::vector<int8_t>& out) {
  for (int64_t m = 0; m < p.mp; ++m) {
    for (int64_t k = 0; k < p.kp; ++k) {
      out[matmul::feature_index(DType::int8, m, k, p.mp)] = k < p.shape.k ? a[m * p.shape.k + k] : 0;
    }
  }
}

void naive_unpack_c(const std::vector<int32_t>& native, const Plan& p, std::vector<int32_t>& c) {
  for (int64_t m = 0; m < p.shape.m; ++m) {
    for (int64_t n = 0; n < p.shape.n; ++n) {
      c[m * p.shape.n + n] = native[matmul::output_index(DType::int8, m, n, p.mp)];
    }
  }
}

void naive_pack_b(const std::vector<int8_t>& b, const Plan& p, std::vector<int8_t>& out) {
  for (int64_t k = 0; k < p.kp; ++k) {
    const int64_t s = k / p.slice_k, kt = std::min(p.slice_k, p.kp - s * p.slice_k);
    for (int64_t n = 0; n < p.np; ++n) {
      const int8_t v = (k < p.shape.k && n < p.shape.n) ? b[k * p.shape.n + n] : 0;
      out[s * p.np * p.slice_k + matmul::weight_index(DType::int8, k % p.slice_k, n, kt)] = v;
    }
  }
}

void measure_shape(int64_t m, int64_t k, int64_t n, int reps, LayoutFigures& f) {
  const Plan p = matmul::make_plan({m, k, n}, {}).value();
  std::vector<int8_t> a(m * k), b(k * n), na(p.a_bytes()), na2(p.a_bytes()), nb(p.b_bytes()), nb2(p.b_bytes());
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<int8_t>(i * 7);
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<int8_t>(i * 13);
  std::vector<int32_t> nc(matmul::c_elements_per_slice(p)), c(m * n), c2(m * n);
  for (size_t i = 0; i < nc.size(); ++i) nc[i] = static_cast<int32_t>(i);
  const std::string shape = fmt::format("M={} K={} N={}", m, k, n);
  LayoutFigure pa{"pack_a " + shape};
  pa.fast_us = best_us(reps, [&] { (void)matmul::pack_a_int8(a, p, na); });
  pa.naive_us = best_us(reps, [&] { naive_pack_a(a, p, na2); });
  pa.equal = na == na2;
  LayoutFigure uc{"unpack_c " + shape};
  uc.fast_us = best_us(reps, [&] { (void)matmul::unpack_c_int32(nc, p, c); });
  uc.naive_us = best_us(reps, [&] { naive_unpack_c(nc, p, c2); });
  uc.equal = c == c2;
  LayoutFigure pb{"pack_b (once per weights) " + shape};
  pb.fast_us = best_us(reps, [&] { (void)matmul::pack_b_int8(b, p, nb); });
  pb.naive_us = best_us(reps, [&] { naive_pack_b(b, p, nb2); });
  pb.equal = nb == nb2;
  f.rows.insert(f.rows.end(), {pa, uc, pb});
}

// The pack's second thread as a call meets it (lib/matmul/layout_host.cpp, the two-thread
// threshold): the kept worker asleep, 1 ms after the last pack (a call's device time is
// longer than the worker's polling), then rows in two halves from one counter, as
// on_row_halves hands them out, against the same rows on the caller's thread alone. Best of
// `reps` single packs, each timed alone; the two give the same bytes.
double sleeping_helper_best_us(int reps, const std::function<void()>& f) {
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    const auto t0 = std::chrono::steady_clock::now();
    f();
    best = std::min(best, std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

void measure_pack_threads(int64_t m, int64_t k, int reps, LayoutFigures& f) {
  const Plan p = matmul::make_plan({m, k, 64}, {}).value();
  std::vector<uint8_t> a(static_cast<size_t>(m * k)), one(static_cast<size_t>(p.a_bytes())), two(one.size());
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<uint8_t>(i * 7);
  const int64_t half = m / 2 / 8 * 8;
  LayoutFigure fig{fmt::format("pack_a 2 threads (vs 1) M={} K={}", m, k)};
  fig.fast_us = sleeping_helper_best_us(reps, [&] {
    std::atomic<int> next{0};
    ref::detail::run_claiming(2, [&](int) {
      for (int i; (i = next.fetch_add(1)) < 2;)
        matmul::pack_a_rows_bytes(p, a.data(), two.data(), i == 0 ? 0 : half, i == 0 ? half : m);
    });
  });
  fig.naive_us = sleeping_helper_best_us(reps, [&] { matmul::pack_a_rows_bytes(p, a.data(), one.data(), 0, m); });
  fig.equal = one == two;
  f.rows.push_back(fig);
}

}  // namespace

LayoutFigures measure_layout(int reps) {
  LayoutFigures f;
  measure_shape(1, 2048, 2048, reps, f);
  measure_shape(512, 2048, 2048, reps, f);
  for (int64_t m : {512, 1024, 2048, 4096, 8192}) measure_pack_threads(m, 2048, reps, f);  // A 1..16 MiB
  return f;
}

nlohmann::json layout_json(const LayoutFigures& f) {
  nlohmann::json j = nlohmann::json::array();
  for (const LayoutFigure& r : f.rows) {
    j.push_back({{"what", r.what}, {"fast_us", r.fast_us}, {"naive_us", r.naive_us},
                 {"speedup", r.naive_us / r.fast_us}, {"equal", r.equal}});
  }
  return j;
}

void print_layout(const LayoutFigures& f) {
  fmt::print("\nhost layout work (int8)         {:>12} {:>12} {:>9}  {}\n", "fast us", "naive us",
             "speedup", "same bytes");
  for (const LayoutFigure& r : f.rows) {
    fmt::print("{:<32} {:>12.2f} {:>12.2f} {:>9.1f}  {}\n", r.what, r.fast_us, r.naive_us,
               r.naive_us / r.fast_us, r.equal ? "yes" : "NO");
  }
}

}  // namespace ork::bench
