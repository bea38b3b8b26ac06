// The text format: what parses, and errors that name the line and the problem.
#include <gtest/gtest.h>

#include <limits>
#include <random>
#include <tuple>

#include "lib/sched/parse.h"
#include "lib/sched/chooser.h"
#include "lib/sched/generate.h"

namespace ork::sched {
namespace {

std::string error_of(const std::string& text) {
  Result<Stream> s = parse_stream(text);
  return s ? std::string("parsed") : s.error().message;
}

TEST(Parse, ReadsEveryLineKind) {
  Result<Stream> s = parse_stream(
      "memory 100K   # capacity\n"
      "cores 2\n"
      "buffer w1 30K\n"
      "buffer out 64K xram\n"
      "\n"
      "load  L1 writes=w1 cycles=30\n"
      "start P1 reads=w1 writes=out[4K:8K] cycles=100\n"
      "wait  P1\n"
      "store S1 reads=w1[0:1K],w1[2K:1K] writes=out cycles=20\n"
      "barrier B1\n");
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->memory_bytes, 100 << 10);
  EXPECT_EQ(s->cores, 2);
  ASSERT_EQ(s->buffers.size(), 2u);
  EXPECT_EQ(s->buffers[0].bytes, 30 << 10);
  EXPECT_TRUE(s->buffers[0].in_memory);
  EXPECT_FALSE(s->buffers[1].in_memory);
  ASSERT_EQ(s->ops.size(), 5u);
  EXPECT_EQ(s->ops[1].kind, OpKind::start);
  EXPECT_EQ(s->ops[1].partner, 2);
  EXPECT_EQ(s->ops[2].partner, 1);
  ASSERT_EQ(s->writes(s->ops[1]).size(), 1u);
  EXPECT_EQ(s->writes(s->ops[1])[0].offset, 4096);
  EXPECT_EQ(s->writes(s->ops[1])[0].length, 8192);
  ASSERT_EQ(s->reads(s->ops[3]).size(), 2u);
  EXPECT_EQ(s->reads(s->ops[3])[1].offset, 2048);
  EXPECT_EQ(s->ops[3].cycles, 20);
  EXPECT_EQ(s->ops[4].kind, OpKind::barrier);
  EXPECT_EQ(s->ops[1].line, 7);
  EXPECT_EQ(op_label(s->ops[2]), "wait P1");
}

// The line splitter (lex.cpp split_line): blanks are space, tab, CR, VT and FF; '#' ends a
// line's words even inside a word; blank and comment-only lines count; the last line needs
// no newline.
TEST(Parse, LinesSplitOnBlanksAndCommentsAsTheFormatSays) {
  Result<Stream> s = parse_stream(
      "memory\t64K\r\n"
      "# a comment line\n"
      "cores 1#no blank before the comment\n"
      "\v\f\n"
      "buffer a 4K\n"
      "load\tL1 \twrites=a[1K:2K]\fcycles=30#30 cycles\r\n"
      "start P reads=a cycles=7\n"
      "wait P");
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->memory_bytes, 64 << 10);
  EXPECT_EQ(s->cores, 1);
  ASSERT_EQ(s->ops.size(), 3u);
  EXPECT_EQ(s->ops[0].name, "L1");
  EXPECT_EQ(s->ops[0].cycles, 30);
  EXPECT_EQ(s->ops[0].line, 6);
  ASSERT_EQ(s->writes(s->ops[0]).size(), 1u);
  EXPECT_EQ(s->writes(s->ops[0])[0].offset, 1024);
  EXPECT_EQ(s->ops[2].line, 8);
  EXPECT_EQ(s->ops[2].partner, 1);
}

// Words are scanned 8 bytes a step (lex.cpp word_end): a word of every length from 1 to 24
// ends at a blank, a '#' or the text's end at every offset, keeps its control bytes (they are
// not blanks) and its bytes above 0x7f.
TEST(Parse, WordsEndAtEveryOffset) {
  for (size_t n = 1; n <= 24; ++n) {
    std::string name = "L";
    for (size_t i = 1; i < n; ++i) name += static_cast<char>(i % 3 == 0 ? '\x01' : i % 3 == 1 ? '\xc3' : 'a' + i % 26);
    for (const char* after : {" cycles=5\n", "\tcycles=5", "#x", "", "\r\n", "\v"}) {
      const std::string text = "memory 1M\nbuffer a 1K\nload " + name + "\twrites=a\nbarrier " + name + "_2" + after;
      Result<Stream> s = parse_stream(text);
      ASSERT_TRUE(s) << n << ": " << s.error().message;
      ASSERT_EQ(s->ops.size(), 2u);
      EXPECT_EQ(s->ops[0].name, name) << n;
      EXPECT_EQ(s->ops[1].name, name + "_2") << n << " " << static_cast<int>(after[0]);
    }
  }
}

// Buffer names are hashed in the first pass and their index slots prefetched 16 declarations
// ahead of their insert (parse_pieces.cpp declare): a duplicate, an undeclared name and a bad
// line past the lookahead still name their line.
TEST(Parse, LookaheadKeepsTheLineOfEveryError) {
  std::string text = "memory 1M\ncores 1\n";
  for (int i = 0; i < 40; ++i) text += "buffer b" + std::to_string(i) + " 1K\n";  // lines 3..42
  for (int i = 0; i < 40; ++i) text += "load L" + std::to_string(i) + " writes=b" + std::to_string(i) + "\n";
  Result<Stream> ok = parse_stream(text);
  ASSERT_TRUE(ok) << ok.error().message;
  EXPECT_EQ(ok->buffers.size(), 40u);
  EXPECT_EQ(ok->ops[39].line, 82);
  Result<Stream> dup = parse_stream(text + "buffer b17 2K\n");
  ASSERT_FALSE(dup);
  EXPECT_EQ(dup.error().message, "line 83: duplicate buffer name b17");
  Result<Stream> unknown = parse_stream(text + "load L40 writes=b40\n");
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().message, "line 83: buffer b40 is not declared");
  // Op names are hashed 16 ops ahead too (stream.cpp link_programs), waits skipped.
  Result<Stream> dup_op = parse_stream(text + "load L17 writes=b1\n");
  ASSERT_FALSE(dup_op);
  EXPECT_EQ(dup_op.error().message, "line 83: duplicate op name L17");
  std::string programs = text;
  for (int i = 0; i < 30; ++i) programs += "start P" + std::to_string(i) + " reads=b" + std::to_string(i) + "\nwait P" + std::to_string(i) + "\n";
  Result<Stream> linked = parse_stream(programs);
  ASSERT_TRUE(linked) << linked.error().message;
  EXPECT_EQ(linked->ops[40 + 2 * 29].partner, 40 + 2 * 29 + 1);
  Result<Stream> dup_start = parse_stream(programs + "start P3 reads=b3\n");
  ASSERT_FALSE(dup_start);
  EXPECT_EQ(dup_start.error().message, "line 143: duplicate op name P3");
  Result<Stream> early = parse_stream("memory 1M\nbuffer a 1K\nbuffer a 1K\n" + text);
  ASSERT_FALSE(early);
  EXPECT_EQ(early.error().message, "line 3: duplicate buffer name a");
}

// append_decimal: the numbers of the text format and the reports (fmt's "{:6}" when a width is
// given), with no string of their own.
TEST(Parse, DecimalsAppendRightAligned) {
  std::string out = "x";
  append_decimal(out, 7, 6);
  append_decimal(out, -42);
  append_decimal(out, 1234567, 6);  // wider than the columns: all its digits
  append_decimal(out, std::numeric_limits<int64_t>::min());
  EXPECT_EQ(out, "x     7-421234567-9223372036854775808");
}

TEST(Parse, ErrorsNameTheLineAndTheProblem) {
  const std::string head = "memory 1M\nbuffer w 4K\n";
  EXPECT_EQ(error_of(head + "load L1 writes=v cycles=3\n"), "line 3: buffer v is not declared");
  EXPECT_EQ(error_of(head + "buffer w 8K\n"), "line 3: duplicate buffer name w");
  EXPECT_EQ(error_of(head + "load L1 writes=w\nload L1 writes=w\n"), "line 4: duplicate op name L1");
  EXPECT_EQ(error_of(head + "wait P1\n"), "line 3: wait P1 without a start before it");
  EXPECT_EQ(error_of(head + "start P1\nwait P1\nwait P1\n"), "line 5: second wait for program P1");
  EXPECT_EQ(error_of(head + "load L1 writes=w[3K:2K]\n"), "line 3: range w[3K:2K] lies outside buffer w of 4096 bytes");
  EXPECT_EQ(error_of(head + "load L1 writes=w[3K]\n"), "line 3: range 'w[3K]' must look like buf[offset:length]");
  EXPECT_EQ(error_of(head + "load L1 writes=w cycles=-1\n"), "line 3: cycles='-1' is not a count from 0 to 1099511627776 (2^40)");
  EXPECT_EQ(error_of(head + "load L1 writes=w speed=3\n"), "line 3: unknown key 'speed' (reads, writes, cycles)");
  EXPECT_EQ(error_of(head + "copy C1\n"),
            "line 3: unknown op 'copy' (memory, cores, slots, policy, buffer, load, store, start, wait, barrier)");
  EXPECT_EQ(error_of(head + "load L1 cycles=3\n"), "line 3: a load needs writes=<buffer>");
  EXPECT_EQ(error_of(head + "store S1 writes=w\n"), "line 3: a store needs reads=<buffer>");
  EXPECT_EQ(error_of("memory 12Q\n"), "line 1: '12Q' is not a size (e.g. 4096, 30K, 2M)");
  EXPECT_EQ(error_of("cores 0\n"), "line 1: cores '0' must be a count from 1 to 1024");
  EXPECT_EQ(error_of("buffer w 4K\n"), "no 'memory SIZE' line (or --memory) gives the memory size");
  EXPECT_EQ(error_of("memory 1M\nbuffer w 0\n"), "line 2: buffer w has size 0");
  EXPECT_EQ(error_of("memory 1M\npolicy fastest\n"), "line 2: policy 'fastest': expected fifo, critical-path or best");
  EXPECT_EQ(error_of("memory 1M\nslots 3K\n"),
            "slots 3072: the slot alignment must be a power of two bytes, at most memory");
  EXPECT_EQ(error_of("memory 1M\nslots 2M\n"),
            "slots 2097152: the slot alignment must be a power of two bytes, at most memory");
  EXPECT_EQ(error_of("memory 1M\nslots\n"), "line 2: slots takes one value");
}

// Values at the edges of int64: each once overflowed a sum (offset + length, a makespan)
// or sized a table (cores). Rejected with the bound stated.
TEST(Parse, HugeValuesAreRejectedNotOverflowed) {
  const std::string head = "memory 1M\nbuffer w 4K\n";
  EXPECT_EQ(error_of(head + "load L1 writes=w[9223372036854775807:1]\n"),
            "line 3: range w[9223372036854775807:1] lies outside buffer w of 4096 bytes");
  EXPECT_EQ(error_of(head + "load L1 writes=w[4095:9223372036854775807]\n"),
            "line 3: range w[4095:9223372036854775807] lies outside buffer w of 4096 bytes");
  EXPECT_EQ(error_of(head + "load L1 writes=w cycles=9223372036854775807\n"),
            "line 3: cycles='9223372036854775807' is not a count from 0 to 1099511627776 (2^40)");
  EXPECT_EQ(error_of("cores 2147483647\n"), "line 1: cores '2147483647' must be a count from 1 to 1024");
  EXPECT_EQ(error_of("memory 9223372036854775807\n"),
            "memory 9223372036854775807 must be from 1 byte to 281474976710656 bytes (256 TiB)");
  EXPECT_EQ(error_of("memory 1M\nbuffer w 9223372036854775807\n"),
            "buffer w: size 9223372036854775807 must be from 1 byte to 281474976710656 bytes (256 TiB)");
  // The largest accepted cycles on many ops still schedule without overflow.
  std::string big = "memory 1M\ncores 2\nbuffer w 4K\n";
  for (int i = 0; i < 64; ++i) big += "start P" + std::to_string(i) + " reads=w cycles=1099511627776\n";
  Result<Stream> s = parse_stream(big);
  ASSERT_TRUE(s) << s.error().message;
  Result<Schedule> r = schedule(*s, Options{});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_GE(r->makespan, 64 * (int64_t{1} << 40));
  EXPECT_GE(r->makespan_input_priced, 64 * (int64_t{1} << 40));
  // Streams built in code go through the same bounds (finalize_stream).
  Stream coded = *s;
  coded.ops[0].cycles = INT64_MAX;
  EXPECT_EQ(finalize_stream(coded).error().message,
            "line 4: cycles 9223372036854775807 must be from 0 to 1099511627776 (2^40)");
  coded = *s;
  coded.cores = 2147483647;
  EXPECT_EQ(finalize_stream(coded).error().message, "cores 2147483647 must be from 1 to 1024");
  Options nan_bw;
  nan_bw.swap_bytes_per_cycle = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(schedule(*s, nan_bw).error().message,
            "swap bandwidth must be a finite number >= 0 bytes/cycle (0 = the stream's loads)");
}

TEST(Parse, StartWithoutWaitIsABarrierAndOverridesApply) {
  Result<Stream> s = parse_stream("memory 1K\ncores 1\nbuffer w 64\nstart P1 reads=w cycles=5\n", {4096, 3});
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->memory_bytes, 4096);
  EXPECT_EQ(s->cores, 3);
  EXPECT_EQ(s->ops[0].kind, OpKind::barrier);
  EXPECT_TRUE(s->ops[0].unwaited_start);
  EXPECT_EQ(op_label(s->ops[0]), "start P1");
}

// An op's accesses go to the stream's one array as reads then writes, whichever order and
// how many times its line names them; each op's run is its own.
TEST(Parse, AccessesInAnyOrderAreTheOpsReadsThenWrites) {
  Result<Stream> s = parse_stream(
      "memory 1K\nbuffer a 64\nbuffer b 64\n"
      "start P writes=b reads=a reads=a[0:8] writes=a[8:8] cycles=1\nwait P\nload L writes=a[4:4] cycles=2\n");
  ASSERT_TRUE(s) << s.error().message;
  ASSERT_EQ(s->ops.size(), 3u);
  const auto r = s->reads(s->ops[0]), w = s->writes(s->ops[0]);
  ASSERT_EQ(r.size(), 2u);
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(r[0].buffer, 0);
  EXPECT_EQ(r[1].length, 8);
  EXPECT_EQ(w[0].buffer, 1);
  EXPECT_EQ(w[1].offset, 8);
  EXPECT_TRUE(s->reads(s->ops[1]).empty());
  EXPECT_TRUE(s->writes(s->ops[1]).empty());
  ASSERT_EQ(s->writes(s->ops[2]).size(), 1u);
  EXPECT_EQ(s->writes(s->ops[2])[0].offset, 4);
  EXPECT_EQ(s->accesses.size(), 5u);
  EXPECT_EQ(format_stream(*s),
            "memory 1024\ncores 1\nbuffer a 64\nbuffer b 64\n"
            "start P reads=a,a[0:8] writes=b,a[8:8] cycles=1\nwait P\nload L writes=a[4:4] cycles=2\n");
}

TEST(Parse, SizesAndRoundTrip) {
  EXPECT_EQ(*parse_size("30K"), 30720);
  EXPECT_EQ(*parse_size("2M"), 2097152);
  EXPECT_EQ(*parse_size("1G"), int64_t{1} << 30);
  EXPECT_EQ(*parse_size("17"), 17);
  EXPECT_FALSE(parse_size("K"));
  EXPECT_FALSE(parse_size("99999999999999999G"));
  const std::string text =
      "memory 4096\ncores 2\nbuffer a 256\nbuffer x 64 xram\n"
      "load L reads=x writes=a[8:16] cycles=4\nstart P reads=a writes=x cycles=9\nwait P\n";
  Result<Stream> s = parse_stream(text);
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(format_stream(*s), text);
  // The chooser's lines (a plan ork_run wrote): the executor's slots and its rule.
  const std::string planned = "memory 8192\ncores 1\nslots 4096\npolicy critical-path\nbuffer a 4096\n"
                              "load L writes=a cycles=4\nstart P reads=a cycles=9\nwait P\n";
  s = parse_stream(planned);
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->slot_align_bytes, 4096);
  EXPECT_EQ(s->policy, "critical-path");
  EXPECT_EQ(format_stream(*s), planned);
}

// The writer's exact bytes on every form the format has (ranges, lists, xram, an unwaited
// start, a barrier, large numbers), and appended after a header as a plan writes it.
TEST(Parse, FormatWritesEveryFormByteForByte) {
  const std::string text =
      "memory 1099511627776\ncores 3\nslots 8\npolicy fifo\nbuffer a 256\nbuffer bb 1073741824\nbuffer x 64 xram\n"
      "load L1 reads=x[0:32],x[32:32] writes=a[8:16],bb cycles=1099511627776\n"
      "start P1 reads=a,bb[1073741823:1] writes=x cycles=0\nstart U reads=a cycles=7\nbarrier B cycles=5\n"
      "wait P1\nstore S reads=a writes=x[63:1] cycles=9223\n";
  Result<Stream> s = parse_stream(text);
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(format_stream(*s), text);
  std::string planned = "# a header\n";
  append_stream_text(planned, *s);
  EXPECT_EQ(planned, "# a header\n" + text);
}

// `text` with `edits` random edits: a run of 1-6 bytes erased, a byte of `alphabet` inserted,
// or a byte replaced by one.
std::string mutated(std::string text, const std::string& alphabet, int edits, std::mt19937& rng) {
  for (int m = 0; m < edits; ++m) {
    const size_t at = rng() % text.size();
    switch (rng() % 3) {
      case 0: text.erase(at, 1 + rng() % 6); break;
      case 1: text.insert(at, 1, alphabet[rng() % alphabet.size()]); break;
      default: text[at] = alphabet[rng() % alphabet.size()];
    }
  }
  return text;
}

// Mutated streams: every one either parses and schedules, or fails with a message.
TEST(Parse, MutatedInputNeverCrashes) {
  const std::string base =
      "memory 64K\ncores 2\nbuffer w1 16K\nbuffer w2 8K\nbuffer o 4K\nbuffer x 4K xram\n"
      "load L1 writes=w1 cycles=30\nload L2 writes=w2[0:4K] cycles=10\n"
      "start P1 reads=w1,w2 writes=o cycles=100\nwait P1\nstore S reads=o[1K:2K] writes=x cycles=5\n";
  const std::string alphabet = "abwoLPSx0123456789KM[]:=,# \nloadstartwaitbarrier";
  std::mt19937 rng(5);
  int parsed = 0;
  for (int i = 0; i < 3000; ++i) {
    const int edits = i % 2 ? 1 : 1 + static_cast<int>(rng() % 4);
    const std::string text = mutated(base, alphabet, edits, rng);
    Result<Stream> s = parse_stream(text);
    if (!s) {
      EXPECT_FALSE(s.error().message.empty());
      continue;
    }
    ++parsed;
    Result<Schedule> r = schedule(*s, Options{});
    EXPECT_TRUE(r || !r.error().message.empty());
  }
  EXPECT_GT(parsed, 100);  // the mutations leave many streams valid, so scheduling is exercised
}

// What a parse gave, as bytes: the error, or the stream's text with every op's and buffer's
// source line (format_stream leaves the lines out).
std::string outcome(const Result<Stream>& s) {
  if (!s) return "error " + std::to_string(s.error().code) + ": " + s.error().message;
  std::string text = format_stream(s.value()) + "lines";
  for (const Buffer& b : s->buffers) text += " " + std::to_string(b.line);
  for (const Op& op : s->ops) text += " " + std::to_string(op.line) + ":" + std::to_string(op.partner);
  return text;
}

// A text read in pieces (parse.cpp: declarations per piece, then in line order, then the op
// lines per piece, on threads) gives what one piece gives: the stream byte for byte, or the
// first error in line order. Pieces from 2 to 9 cut lines, declarations, and faults anywhere.
void expect_pieces_agree(const std::string& text, const std::string& what) {
  const std::string one = outcome(parse_stream(text, {}, 1));
  for (int pieces : {2, 3, 5, 9}) ASSERT_EQ(outcome(parse_stream(text, {}, pieces)), one) << what << ", " << pieces << " pieces";
}

TEST(Parse, PiecesReadAsOneOnMutatedText) {
  const std::string base =
      "memory 64K\ncores 2\nbuffer w1 16K\nbuffer w2 8K\nload L1 writes=w1 cycles=30\nbuffer o 4K\n"
      "load L2 writes=w2[0:4K] cycles=10\nstart P1 reads=w1,w2 writes=o cycles=100\nwait P1\n"
      "buffer x 4K xram\nstore S reads=o[1K:2K] writes=x cycles=5\nslots 1K\npolicy best\n";
  const std::string alphabet = "abwoLPSx0123456789KM[]:=,# \nloadstartwaitbarrierbuffer";
  std::mt19937 rng(11);
  for (int i = 0; i < 300; ++i) {
    const int edits = 1 + static_cast<int>(rng() % 4);
    expect_pieces_agree(mutated(base, alphabet, edits, rng), "mutation " + std::to_string(i));
  }
}

// A generated stream with one bad line put at many places: every piece count names the same
// line and problem; and unbroken, the same stream.
TEST(Parse, PiecesKeepTheFirstFaultOfAnyPass) {
  RandomParams params;
  params.programs = 60;
  const std::string text = format_stream(make_random_stream(3, params));
  expect_pieces_agree(text, "unbroken");
  std::vector<size_t> starts{0};
  for (size_t i = 0; i < text.size(); ++i)
    if (text[i] == '\n') starts.push_back(i + 1);
  const char* faults[] = {"buffer w0_0 1K\n", "buffer late 0\n", "cores 0\n", "load X writes=nowhere\n",
                          "load X writes=w0_0[0:999999]\n", "frobnicate\n", "memory\n", "buffer b 1K extra\n"};
  for (size_t at = 0; at < starts.size(); at += 29)
    for (const char* fault : faults) {
      std::string broken = text;
      broken.insert(starts[at], fault);
      expect_pieces_agree(broken, std::string(fault) + " at line " + std::to_string(at + 1));
      ASSERT_NE(outcome(parse_stream(broken, {}, 4)).rfind("error", 0), std::string::npos) << fault;
    }
}

// Past kMaxOps op lines no stream is valid: the ops are read for their faults, not kept (a
// 256 MiB text of short op lines would be 8 GB of them), and the error is the one a reading
// line by line gives: the first bad line, else the bound.
TEST(Parse, PastTheOpBoundNothingIsKeptAndTheErrorIsTheSame) {
  std::string text = "memory 1K\nbuffer a 1\n";
  for (int64_t i = 0; i <= kMaxOps; ++i) text += "barrier b\n";
  const std::string bound = "error -22: the stream has 1048577 ops; at most 1048576 are allowed";
  EXPECT_EQ(outcome(parse_stream(text)), bound);
  EXPECT_EQ(outcome(parse_stream(text + "load L writes=nowhere\n")),
            "error -22: line 1048580: buffer nowhere is not declared");
  EXPECT_EQ(outcome(parse_stream("memory 0\n" + text.substr(10))), "error -22: no 'memory SIZE' line (or --memory) gives the memory size");
}

// From 4 MiB a text is read on the machine's threads, in 8 pieces a thread: the same stream,
// and the stream that was written, op by op and buffer by buffer.
TEST(Parse, LongTextOnThreadsIsTheSameStream) {
  DecodeParams params;
  params.layers = 1000;
  const Stream original = make_transformer_decode(params);
  const std::string text = format_stream(original);
  ASSERT_GE(text.size(), size_t{4} << 20);
  EXPECT_EQ(outcome(parse_stream(text)), outcome(parse_stream(text, {}, 1)));
  Result<Stream> back = parse_stream(text, {}, 1);
  ASSERT_TRUE(back) << back.error().message;
  ASSERT_EQ(back->buffers.size(), original.buffers.size());
  for (size_t b = 0; b < original.buffers.size(); ++b) {
    ASSERT_EQ(back->buffers[b].name, original.buffers[b].name) << b;
    ASSERT_EQ(back->buffers[b].bytes, original.buffers[b].bytes) << b;
  }
  ASSERT_EQ(back->ops.size(), original.ops.size());
  ASSERT_EQ(back->accesses.size(), original.accesses.size());
  for (size_t i = 0; i < original.ops.size(); ++i) {
    const Op &a = back->ops[i], &b = original.ops[i];
    ASSERT_EQ(std::tie(a.name, a.kind, a.cycles, a.first_access, a.read_count, a.write_count),
              std::tie(b.name, b.kind, b.cycles, b.first_access, b.read_count, b.write_count)) << i;
  }
  for (size_t i = 0; i < original.accesses.size(); ++i) {
    const Access &a = back->accesses[i], &b = original.accesses[i];
    ASSERT_EQ(std::tie(a.buffer, a.offset, a.length), std::tie(b.buffer, b.offset, b.length)) << i;
  }
}

}  // namespace
}  // namespace ork::sched
