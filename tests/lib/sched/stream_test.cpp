// lib/sched/stream.cpp on streams built in code (the parser's own errors, with line
// numbers: parse_test.cpp): op names and labels, finalize_stream's linking of starts and
// waits, the demotion of an unwaited start (and that a second finalize undoes and redoes
// it), and every rule it checks, each refused with a message that names the op.
#include <gtest/gtest.h>

#include <cerrno>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "lib/sched/stream.h"

namespace ork::sched {
namespace {

// Memory of 1 KiB, one core, buffer "a" of 64 bytes, no ops yet.
Stream base() {
  Stream s;
  s.memory_bytes = 1024;
  s.buffers.push_back({"a", 64, true, 0});
  return s;
}

Op op(OpKind kind, std::string name, int64_t cycles = 1) {
  Op o;
  o.kind = kind;
  o.name = std::move(name);
  o.cycles = cycles;
  return o;
}

// A load writing the stream's access `at` (Stream::accesses, set by the test).
Op load(std::string name, uint32_t at = 0) {
  Op o = op(OpKind::load, std::move(name));
  o.first_access = at;
  o.write_count = 1;
  return o;
}

// The message finalize_stream refuses `s` with ("" when it accepts it).
std::string refusal(Stream s, bool check_buffer_names = true) {
  const Status st = finalize_stream(s, check_buffer_names);
  if (st) return "";
  EXPECT_EQ(st.error().code, -EINVAL);
  return st.error().message;
}

TEST(Stream, KindNamesAndLabels) {
  EXPECT_STREQ(kind_name(OpKind::load), "load");
  EXPECT_STREQ(kind_name(OpKind::store), "store");
  EXPECT_STREQ(kind_name(OpKind::start), "start");
  EXPECT_STREQ(kind_name(OpKind::wait), "wait");
  EXPECT_STREQ(kind_name(OpKind::barrier), "barrier");
  EXPECT_EQ(op_label(op(OpKind::wait, "P1", 0)), "wait P1");
  Op demoted = op(OpKind::barrier, "P2");
  demoted.unwaited_start = true;  // still named as it was written
  EXPECT_EQ(op_label(demoted), "start P2");
}

TEST(Stream, LinksEachWaitToItsStart) {
  Stream s = base();
  s.accesses = {{0, 0, 64}};
  s.ops = {op(OpKind::start, "P1"), load("L1"), op(OpKind::wait, "P1", 0)};
  ASSERT_TRUE(finalize_stream(s)) << finalize_stream(s).error().message;
  EXPECT_EQ(s.ops[0].partner, 2);
  EXPECT_EQ(s.ops[2].partner, 0);
  EXPECT_EQ(s.ops[1].partner, -1);
  EXPECT_EQ(s.ops[0].kind, OpKind::start);
}

TEST(Stream, AnUnwaitedStartIsABarrierUntilAWaitFollowsIt) {
  Stream s = base();
  s.ops = {op(OpKind::start, "P1")};
  ASSERT_TRUE(finalize_stream(s));
  EXPECT_EQ(s.ops[0].kind, OpKind::barrier);
  EXPECT_TRUE(s.ops[0].unwaited_start);
  s.ops.push_back(op(OpKind::wait, "P1", 0));  // a wait added later: the start is one again
  ASSERT_TRUE(finalize_stream(s)) << finalize_stream(s).error().message;
  EXPECT_EQ(s.ops[0].kind, OpKind::start);
  EXPECT_FALSE(s.ops[0].unwaited_start);
  EXPECT_EQ(s.ops[0].partner, 1);
}

TEST(Stream, StreamBoundsAreNamed) {
  Stream s = base();
  s.memory_bytes = 0;
  EXPECT_EQ(refusal(s), "memory 0 must be from 1 byte to 281474976710656 bytes (256 TiB)");
  s = base();
  s.cores = kMaxCores + 1;
  EXPECT_EQ(refusal(s), "cores 1025 must be from 1 to 1024");
  s = base();
  s.buffers.push_back({"b", 0, true, 0});
  EXPECT_EQ(refusal(s), "buffer b: size 0 must be from 1 byte to 281474976710656 bytes (256 TiB)");
  s = base();
  s.buffers.push_back({"a", 8, true, 0});
  EXPECT_EQ(refusal(s), "duplicate buffer name a");
  EXPECT_EQ(refusal(s, false), "");  // the parser has checked the names already
}

TEST(Stream, OpRulesNameTheOp) {
  const auto with = [](std::initializer_list<Op> ops, std::vector<Access> accesses = {}) {
    Stream s = base();
    s.ops = ops;
    s.accesses = std::move(accesses);
    return refusal(s);
  };
  EXPECT_EQ(with({load("L1")}, {{0, 32, 64}}), "op 0 (load L1): range [32:64] lies outside buffer a of 64 bytes");
  EXPECT_EQ(with({load("L1")}, {{1, 0, 8}}), "op 0 (load L1): access names no declared buffer");
  // Built in code, an op may point past the stream's accesses: refused, never read.
  EXPECT_EQ(with({load("L1", 1)}, {{0, 0, 64}}), "op 0 (load L1): its accesses lie past the stream's 1");
  EXPECT_EQ(with({load("L1")}), "op 0 (load L1): its accesses lie past the stream's 0");
  EXPECT_EQ(with({op(OpKind::load, "L1")}), "op 0 (load L1): a load needs writes=<buffer>");
  EXPECT_EQ(with({op(OpKind::store, "S1")}), "op 0 (store S1): a store needs reads=<buffer>");
  EXPECT_EQ(with({op(OpKind::start, "P1"), op(OpKind::wait, "P1", 3)}),
            "op 1 (wait P1): a wait takes no reads/writes/cycles (its start has them)");
  EXPECT_EQ(with({op(OpKind::barrier, "B", kMaxOpCycles + 1)}),
            "op 0 (barrier B): cycles 1099511627777 must be from 0 to 1099511627776 (2^40)");
  Op wide = load("L1");
  wide.write_count = kMaxOpAccesses + 1;  // the graph numbers an op's accesses in 31 bits
  EXPECT_EQ(with({wide}, std::vector<Access>(kMaxOpAccesses + 1, {0, 0, 64})),
            "op 0 (load L1): 1048577 reads and writes: at most 1048576 (2^20) an op");
  wide.write_count = kMaxOpAccesses;
  EXPECT_EQ(with({wide}, std::vector<Access>(kMaxOpAccesses, {0, 0, 64})), "");
  EXPECT_EQ(with({op(OpKind::wait, "P1", 0)}), "op 0 (wait P1): wait P1 without a start before it");
  EXPECT_EQ(with({op(OpKind::start, "P1"), op(OpKind::wait, "P1", 0), op(OpKind::wait, "P1", 0)}),
            "op 2 (wait P1): second wait for program P1");
  EXPECT_EQ(with({op(OpKind::barrier, "B"), op(OpKind::barrier, "B")}), "op 1 (barrier B): duplicate op name B");
  EXPECT_EQ(with({op(OpKind::barrier, "")}), "op 0 (barrier ): op has no name");
}

TEST(Stream, AParsedOpIsNamedByItsLine) {
  Stream s = base();
  s.ops = {op(OpKind::load, "L1")};
  s.ops[0].line = 7;
  EXPECT_EQ(refusal(s), "line 7: a load needs writes=<buffer>");
}

}  // namespace
}  // namespace ork::sched
