// The published M-tile experiment's figures (published.h). Source of every one:
// oRKLLM/ork-driver:AGENTS.md "Weight-DMA amortization" and the experiment log of commit
// 6775334 ("raise the M-tile cap to the 0x1040 schedule max", 2026-06-30): int8, NPU pinned
// at 1.0 GHz, measured with ork-driver's tools/mc_prof.c. Its sweep is "µs/submit" of one
// M-tile (one task, all K x N weights); its table is "µs/matmul" at N = 2048 with the old
// cap (31 rows) and the bank limit (mg_max*64 = 128 rows at K = 2048, 64 at K = 3584). The
// same figures: docs/hardware.md section 10.
#include "tools/mc_prof/published.h"

namespace ork::tools {
namespace {

constexpr const char* kSweep =
    "oRKLLM/ork-driver:AGENTS.md \"Weight-DMA amortization\" (commit 6775334): single-core mc_prof sweep, "
    "K = 2048, us per submit";
constexpr const char* kTable =
    "oRKLLM/ork-driver:AGENTS.md \"Weight-DMA amortization\" (commit 6775334): before/after table, N = 2048, "
    "us per matmul";

Figure sweep(const char* name, double us, int64_t n, int64_t mc, bool train) {
  return {name, us, Setup{.m = mc, .k = 2048, .n = n, .cores = 1, .mc = mc}, train, kSweep};
}

Figure table(const char* name, double us, int64_t k, int cores, int64_t mc, bool train) {
  return {name, us, Setup{.m = 0, .k = k, .n = 2048, .cores = cores, .mc = mc, .m_unknown = true}, train, kTable};
}

}  // namespace

// Training set: the sweep and the K = 2048 table except its 3-core "after"; held out: the
// K = 3584 rows and K = 2048 3-core "after" (a shape and a core count the fit never saw).
const std::vector<Figure>& published_figures() {
  static const std::vector<Figure> figures = {
      sweep("sweep K2048 N2048 mc=4", 493, 2048, 4, true),
      sweep("sweep K2048 N2048 mc=8", 494, 2048, 8, true),
      sweep("sweep K2048 N2048 mc=16", 501, 2048, 16, true),
      sweep("sweep K2048 N2048 mc=31", 516, 2048, 31, true),
      sweep("sweep K2048 N512 mc=31", 228, 512, 31, true),
      sweep("sweep K2048 N2048 mc=31 (N sweep)", 510, 2048, 31, true),
      sweep("sweep K2048 N4096 mc=31", 914, 4096, 31, true),
      table("K2048/1c/cap31", 10691, 2048, 1, 31, true),
      table("K2048/1c/mg_max*64", 5125, 2048, 1, 128, true),
      table("K2048/3c/cap31", 4522, 2048, 3, 31, true),
      table("K2048/3c/mg_max*64", 2778, 2048, 3, 128, false),
      table("K3584/1c/cap31", 18155, 3584, 1, 31, false),
      table("K3584/1c/mg_max*64", 12116, 3584, 1, 64, false),
      table("K3584/3c/mg_max*64", 5008, 3584, 3, 64, false),
  };
  return figures;
}

}  // namespace ork::tools
