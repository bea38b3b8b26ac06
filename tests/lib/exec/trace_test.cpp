// The run's trace JSON (lib/exec/trace.cpp), read back with a JSON parser: the two named
// tracks, each event's track, name and times (microseconds from the earliest event, in any
// input order), and names that need escaping (matmul names come from the model file).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "lib/exec/trace.h"

namespace ork::exec {
namespace {

using nlohmann::json;

TEST(Trace, NamesTheComputeAndIoTracks) {
  const json t = json::parse(trace_json({}));
  ASSERT_EQ(t["traceEvents"].size(), 2u);
  for (int tid : {0, 1}) {
    const json& m = t["traceEvents"][static_cast<size_t>(tid)];
    EXPECT_EQ(m["ph"], "M");
    EXPECT_EQ(m["tid"], tid);
    EXPECT_EQ(m["args"]["name"], tid == 0 ? "compute" : "io");
  }
}

TEST(Trace, EventsAreSlicesInMicrosecondsFromTheEarliest) {
  const std::vector<TraceEvent> events = {
      {"0.0.q", 0, 5'000, 7'500},       // begins after the read below
      {"load 0.0.q", 1, 1'000, 4'250},  // the earliest: t = 0
  };
  const json t = json::parse(trace_json(events));
  ASSERT_EQ(t["traceEvents"].size(), 4u);
  const json& compute = t["traceEvents"][2];
  const json& load = t["traceEvents"][3];
  EXPECT_EQ(compute["ph"], "X");
  EXPECT_EQ(compute["tid"], 0);
  EXPECT_EQ(compute["name"], "0.0.q");
  EXPECT_DOUBLE_EQ(compute["ts"].get<double>(), 4.0);
  EXPECT_DOUBLE_EQ(compute["dur"].get<double>(), 2.5);
  EXPECT_EQ(load["tid"], 1);
  EXPECT_DOUBLE_EQ(load["ts"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(load["dur"].get<double>(), 3.25);
}

TEST(Trace, NamesAreEscaped) {
  const std::string name = "0.1.attn \"q\" \\ proj";
  const json t = json::parse(trace_json({{name, 0, 0, 10}}));
  EXPECT_EQ(t["traceEvents"][2]["name"], name);
  const json bad = json::parse(trace_json({{"w\xff", 0, 0, 10}}));  // not UTF-8
  EXPECT_EQ(bad["traceEvents"][2]["name"], "w\xef\xbf\xbd") << "U+FFFD";
}

}  // namespace
}  // namespace ork::exec
