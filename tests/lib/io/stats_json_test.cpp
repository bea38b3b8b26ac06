// stats_to_json: every LoaderStats field under its key, with the value it holds, and the
// hit rate derived from loads and hits (0 with no load, not a division by zero).
#include "lib/io/stats_json.h"

#include <gtest/gtest.h>

namespace ork::io {
namespace {

TEST(StatsJson, EveryFieldUnderItsKey) {
  LoaderStats s;
  s.loads = 8, s.hits = 6, s.misses = 2, s.layers_read = 9, s.bytes_read = 4096 * 9;
  s.prefetch_dropped = 1, s.io_ns = 123456789, s.wait_ns = 42;
  s.engine_counters = {.chunks = 36, .short_reads = 3, .retries = 2, .cancelled = 1, .max_in_flight = 4};
  s.source = SourceKind::kWorker, s.engine = EngineKind::kPread;
  s.async = true, s.direct = false, s.registered_buffers = true, s.align_bytes = 4096;
  s.n_slots = 3, s.prefetch_depth = 2, s.fallbacks = {"statx reports no direct I/O"};
  const nlohmann::json j = stats_to_json(s);
  EXPECT_EQ(j.size(), 23u);  // a field added to LoaderStats and not here fails below
  EXPECT_EQ(j["source"], "worker");
  EXPECT_EQ(j["engine"], "pread");
  EXPECT_EQ(j["async"], true);
  EXPECT_EQ(j["direct"], false);
  EXPECT_EQ(j["registered_buffers"], true);
  EXPECT_EQ(j["align_bytes"], 4096);
  EXPECT_EQ(j["n_slots"], 3);
  EXPECT_EQ(j["prefetch_depth"], 2);
  EXPECT_EQ(j["loads"], 8);
  EXPECT_EQ(j["hits"], 6);
  EXPECT_EQ(j["misses"], 2);
  EXPECT_DOUBLE_EQ(j["hit_rate"].get<double>(), 0.75);
  EXPECT_EQ(j["layers_read"], 9);
  EXPECT_EQ(j["bytes_read"], 4096 * 9);
  EXPECT_EQ(j["prefetch_dropped"], 1);
  EXPECT_EQ(j["io_ns"], 123456789);
  EXPECT_EQ(j["wait_ns"], 42);
  EXPECT_EQ(j["chunks"], 36);
  EXPECT_EQ(j["short_reads"], 3);
  EXPECT_EQ(j["retries"], 2);
  EXPECT_EQ(j["cancelled"], 1);
  EXPECT_EQ(j["max_in_flight"], 4);
  EXPECT_EQ(j["fallbacks"], nlohmann::json::array({"statx reports no direct I/O"}));
}

TEST(StatsJson, NoLoadsIsAZeroHitRate) {
  EXPECT_EQ(stats_to_json(LoaderStats{})["hit_rate"].get<double>(), 0.0);
}

}  // namespace
}  // namespace ork::io
