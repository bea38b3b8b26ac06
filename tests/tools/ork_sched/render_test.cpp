// The tool's outputs: the JSON report's fields, the SVG and the trace of seed example 1.
#include <gtest/gtest.h>

#include "lib/sched/generate.h"
#include "lib/sched/parse.h"
#include "tests/lib/sched/example_streams.h"
#include "tools/ork_sched/render.h"

namespace ork::sched {
namespace {

struct Fixture {
  Stream s = test::example("example1.stream");
  Graph g = build_graph(s).value();
  Schedule r = schedule(s, g, Options{}).value();
};

TEST(Render, JsonReportHasTheAgreedFields) {
  Fixture f;
  nlohmann::json j = render_json(f.s, f.r);
  EXPECT_EQ(j["order"], nlohmann::json({"load L1", "start P1", "load L2", "start P2", "load L3", "wait P1",
                                        "start P3", "wait P2", "wait P3", "store S3"}));
  EXPECT_EQ(j["core"], nlohmann::json({{"P1", 0}, {"P2", 1}, {"P3", 0}}));
  EXPECT_EQ(j["makespan_input"], 410);
  EXPECT_EQ(j["makespan"], 250);
  EXPECT_EQ(j["peak_bytes"], f.r.peak_bytes);
  EXPECT_EQ(j["lower_bound"], 250);
  EXPECT_EQ(j["pass"], 0);
  EXPECT_TRUE(j["pass"].is_number());
  EXPECT_EQ(j["cap_percent"], 100);
  EXPECT_EQ(j["policy"], "fifo");
}

TEST(Render, JsonPassInputIsAString) {
  Stream s = parse_stream("memory 1K\nbuffer w 64\nload L writes=w cycles=5\nstart P reads=w cycles=5\nwait P\n").value();
  Schedule r = schedule(s, Options{}).value();  // nothing to overlap: the input order stays
  nlohmann::json j = render_json(s, r);
  EXPECT_EQ(j["pass"], "input");
  EXPECT_EQ(j["makespan"], 10);
  EXPECT_EQ(j["makespan_input"], 10);
}

// The text writer against the tree's dump: examples (pass 0, input), a stream whose names need
// escapes and share a program name, a pass-1 stream with swaps, and best's many attempts.
TEST(Render, JsonTextIsTheTreesDump) {
  std::vector<std::pair<Stream, Options>> cases;
  for (const char* file : {"example1.stream", "example2.stream", "transformer_decode.stream"})
    cases.push_back({test::example(file), Options{}});
  // Names that need escapes: a quote, a backslash, control characters (0x01, 0x1f: a tab
  // would split the name) and a two-byte UTF-8 character.
  Result<Stream> escapes = parse_stream(
      "memory 1K\nbuffer w 64\nload L\"\\\x01\xc3\xa9 writes=w cycles=5\n"
      "start P\x1f" "2 reads=w cycles=5\nwait P\x1f" "2\nstart Q cycles=1\n");
  ASSERT_TRUE(static_cast<bool>(escapes)) << escapes.error().message;
  cases.push_back({*escapes, Options{}});
  RandomParams p;
  p.programs = 60;
  p.memory_bytes = 128 << 10;
  p.max_buffer_percent = 12;
  p.cores = 3;
  p.max_outstanding = 3;
  Options best;
  best.policy = Policy::best;
  cases.push_back({make_random_stream(16, p), best});  // pass 1, 6 swaps, 48 attempts
  for (const auto& [s, o] : cases) {
    Result<Schedule> r = schedule(s, o);
    ASSERT_TRUE(static_cast<bool>(r)) << r.error().message;
    EXPECT_EQ(render_json_text(s, *r), render_json(s, *r).dump(2));
    if (&s == &cases.back().first) {
      EXPECT_EQ(r->pass, Pass::one);
      EXPECT_EQ(r->swaps.size(), 6u);
    }
  }
}

// From 65,536 ops the core object is written beside the order (json_text.cpp): the same bytes.
TEST(Render, JsonTextOfALongStreamIsTheTreesDump) {
  DecodeParams p;
  p.layers = 800;
  const Stream s = make_transformer_decode(p);
  ASSERT_GE(s.ops.size(), 65536u);
  Result<Schedule> r = schedule(s, Options{});
  ASSERT_TRUE(static_cast<bool>(r)) << r.error().message;
  EXPECT_EQ(render_json_text(s, *r), render_json(s, *r).dump(2));
}

TEST(Render, JsonTextOfAnInvalidNameThrowsAsTheTreeDoes) {
  Stream s = parse_stream("memory 1K\nstart P\xff cycles=5\nwait P\xff\n").value();
  Schedule r = schedule(s, Options{}).value();
  EXPECT_THROW((void)render_json(s, r).dump(2), nlohmann::json::exception);
  EXPECT_THROW((void)render_json_text(s, r), nlohmann::json::exception);
}

TEST(Render, SvgShowsBothOrdersOnOneAxis) {
  Fixture f;
  const std::string svg = render_svg(f.s, make_panels(f.s, f.g, f.r, Options{}));
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("input order: 410 cycles"), std::string::npos);
  EXPECT_NE(svg.find("new order: 250 cycles"), std::string::npos);
  EXPECT_NE(svg.find("<title>load L1 [0, 30)</title>"), std::string::npos);
  EXPECT_NE(svg.find("<title>P2 [61, 161)</title>"), std::string::npos);
  EXPECT_NE(svg.find("live bytes"), std::string::npos);
  EXPECT_EQ(svg.substr(svg.size() - 7), "</svg>\n");
}

TEST(Render, TraceHasOneThreadPerEngine) {
  Fixture f;
  nlohmann::json t = render_trace(f.s, make_panels(f.s, f.g, f.r, Options{}));
  bool found = false;
  for (const auto& e : t["traceEvents"])
    if (e["ph"] == "X" && e["pid"] == 2 && e["name"] == "start P2") {
      EXPECT_EQ(e["tid"], 2);  // core 1
      EXPECT_EQ(e["ts"], 61);
      EXPECT_EQ(e["dur"], 100);
      found = true;
    }
  EXPECT_TRUE(found);
}

TEST(Render, TextReport) {
  Fixture f;
  const std::string text = render_text(f.s, f.r);
  EXPECT_NE(text.find("new order           250 cycles (-39.0 %), pass 0 at cap 100 %, policy fifo"), std::string::npos)
      << text;
  EXPECT_NE(text.find("     4  start P2  -> core 1\n"), std::string::npos) << text;
}

}  // namespace
}  // namespace ork::sched
