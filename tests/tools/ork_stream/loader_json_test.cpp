// stats_to_json: every LoaderStats field under its key, with the value it holds, and the
// hit rate derived from loads and hits (0 with no load, not a division by zero).
#include "tools/ork_stream/loader_json.h"

#include <gtest/gtest.h>

namespace ork::io::tools {
namespace {

TEST(StatsJson, EveryFieldUnderItsKey) {
  LoaderStats s;
  s.loads = 8, s.hits = 6, s.misses = 2, s.layers_read = 9, s.bytes_read = 4096 * 9;
  s.prefetch_dropped = 1, s.io_ns = 123456789, s.wait_ns = 42;
  s.engine_counters = {.chunks = 36, .short_reads = 3, .retries = 2, .cancelled = 1, .max_in_flight = 4};
  s.source = SourceKind::kWorker, s.engine = EngineKind::kPread;
  s.async = true, s.direct = false, s.registered_buffers = true, s.align_bytes = 4096;
  s.n_slots = 3, s.prefetch_depth = 2, s.fallbacks = {"statx reports no direct I/O"};
  // Every key with its value: a field missing, added or renamed fails the comparison.
  const nlohmann::json want = {
      {"source", "worker"}, {"engine", "pread"}, {"async", true}, {"direct", false},
      {"registered_buffers", true}, {"align_bytes", 4096}, {"n_slots", 3}, {"prefetch_depth", 2},
      {"loads", 8}, {"hits", 6}, {"misses", 2}, {"hit_rate", 0.75}, {"layers_read", 9},
      {"bytes_read", 4096 * 9}, {"prefetch_dropped", 1}, {"io_ns", 123456789}, {"wait_ns", 42},
      {"chunks", 36}, {"short_reads", 3}, {"retries", 2}, {"cancelled", 1}, {"max_in_flight", 4},
      {"fallbacks", {"statx reports no direct I/O"}}};
  EXPECT_EQ(stats_to_json(s), want);
}

TEST(StatsJson, NoLoadsIsAZeroHitRate) {
  EXPECT_EQ(stats_to_json(LoaderStats{})["hit_rate"].get<double>(), 0.0);
}

}  // namespace
}  // namespace ork::io::tools
