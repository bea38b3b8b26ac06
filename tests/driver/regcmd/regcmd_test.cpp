// Regcmd entries (driver/regcmd/regcmd.cpp): encoding, the Builder, the trailer and chain
// patching. The decoder: decode_test.cpp.
#include <gtest/gtest.h>

#include "driver/regcmd/regcmd.h"

namespace R = ork::regs;
using namespace ork::regcmd;

TEST(Regcmd, EncodeDecodeRoundTrip) {
  EXPECT_EQ(encode(0x0201, 0x00010040, 0x1020), 0x0201'0001'0040'1020ull);
  const uint64_t samples[] = {0, 0x0041'0000'0000'0000ull, 0x0081'0000'000d'0008ull, ~0ull,
                              0x1001'8000'0001'403cull};
  for (uint64_t raw : samples) {
    const Entry e = decode(raw);
    EXPECT_EQ(encode(e.target, e.value, e.reg), raw);
  }
  const Entry e = decode(0x0081'0000'007f'0008ull);  // the TRM's op_en example
  EXPECT_EQ(e.target, 0x0081);
  EXPECT_EQ(e.value, 0x7fu);
  EXPECT_EQ(e.reg, 0x0008);
  static_assert(decode(encode(0x2001, 0xffffffffu, 0x5044)).value == 0xffffffffu);
}

TEST(Regcmd, EmitChecksFieldsAndNamesTheOverflow) {
  Builder b;
  b.emit(R::CnaDataSize0{.datain_height = 64, .datain_width = 1});
  ASSERT_TRUE(b.ok());
  ASSERT_EQ(b.size_entries(), 1u);
  EXPECT_EQ(b.entries()[0], 0x0201'0001'0040'1020ull);
  b.emit(R::CnaDataSize0{.datain_height = 4096, .datain_width = 1});
  EXPECT_FALSE(b.ok());
  EXPECT_EQ(b.error(), "CNA_DATA_SIZE0.DATAIN_HEIGHT = 4096 does not fit 11 bits");
  EXPECT_EQ(b.size_entries(), 1u);  // nothing emitted
  b.emit(R::CnaDataSize2{.dataout_width = 1});
  EXPECT_EQ(b.size_entries(), 1u);  // everything after an error is ignored
  b.clear();
  EXPECT_TRUE(b.ok());
  EXPECT_EQ(b.size_entries(), 0u);
}

TEST(Regcmd, EmitRawKeepsTheValue) {
  Builder b;
  b.emit_raw(R::Block::dpu, R::DPU_DATA_CUBE_CHANNEL, 16383);
  EXPECT_EQ(b.entries()[0], encode(0x1001, 16383, 0x403c));
}

TEST(Regcmd, FinishPadsAndAppendsTheTrailer) {
  Builder b;
  b.emit(R::CnaDataSize2{.dataout_width = 1});  // 1 entry: odd, so one padding entry
  b.finish(0x12340, 20);
  ASSERT_TRUE(b.ok()) << b.error();
  const std::vector<uint64_t> want = {
      encode(0x0201, 1, 0x1028), 0,
      encode(0x0101, 0x12340, 0x0010),     // BASE_ADDRESS = next IOVA (PC_SOURCE_ADDR 31:4)
      encode(0x0101, 20 / 2 - 1, 0x0014),  // REGISTER_AMOUNTS = entries/2 - 1
      0x0041'0000'0000'0000ull,
      0x0081'0000'000d'0008ull};
  EXPECT_EQ(std::vector<uint64_t>(b.entries().begin(), b.entries().end()), want);
}

TEST(Regcmd, FinishOfTheLastTaskHasZeroChainEntries) {
  Builder b;
  b.emit(R::CnaDataSize2{.dataout_width = 1}).emit(R::CnaDataSize3{.dataout_atomics = 4});
  b.finish(0, 0, 0x1d);
  ASSERT_EQ(b.size_entries(), 6u);  // even body: no padding
  EXPECT_EQ(b.entries()[2], 0u);
  EXPECT_EQ(b.entries()[3], 0u);
  EXPECT_EQ(b.entries()[4], 0x0041'0000'0000'0000ull);
  EXPECT_EQ(b.entries()[5], 0x0081'0000'001d'0008ull);
}

TEST(Regcmd, FinishRejectsBadChainTargets) {
  Builder b;
  b.finish(0x1'0000'0000ull, 8);
  EXPECT_NE(b.error().find("not below 4 GiB"), std::string::npos) << b.error();
  b.clear();
  b.finish(0x1008, 8);
  EXPECT_NE(b.error().find("16-byte aligned"), std::string::npos) << b.error();
  b.clear();
  b.finish(0x1000, 7);
  EXPECT_NE(b.error().find("must be even"), std::string::npos) << b.error();
}

TEST(Regcmd, AmountFormula) {
  EXPECT_EQ(amount_for_entries(108), 53u);  // MTX: 104 + 4 entries
  // Equals the vendor kernel's (regcfg_amount + 4 + 1)/2 - 1 for an even-padded task.
  for (uint32_t body = 1; body < 300; ++body) {
    const uint32_t entries = (body + 4 + 1) / 2 * 2;
    EXPECT_EQ(amount_for_entries(entries), (body + 4 + 1) / 2 - 1) << body;
    EXPECT_EQ(entries_for_amount(amount_for_entries(entries)), entries);
  }
}

TEST(Regcmd, PatchNextRewritesOnlyTheChainEntries) {
  Builder b;
  b.emit(R::CnaDataSize2{.dataout_width = 1});
  b.finish(0, 0);
  std::vector<uint64_t> task(b.entries().begin(), b.entries().end());
  const std::vector<uint64_t> before = task;
  patch_next(task, 0x40000, 14);
  EXPECT_EQ(task[0], before[0]);
  EXPECT_EQ(task[1], before[1]);
  EXPECT_EQ(task[2], encode(0x0101, 0x40000, 0x0010));
  EXPECT_EQ(task[3], encode(0x0101, 6, 0x0014));
  EXPECT_EQ(task[4], before[4]);
  EXPECT_EQ(task[5], before[5]);
  patch_next(task, 0, 0);
  EXPECT_EQ(task, before);
}
