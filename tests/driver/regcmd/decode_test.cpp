// The decoder (driver/regcmd/decode.cpp): a buffer of entries back to named register writes,
// undescribed registers, trailers and padding called what they are.
#include <gtest/gtest.h>

#include "driver/regcmd/regcmd.h"

namespace R = ork::regs;
using namespace ork::regcmd;

TEST(Regcmd, DecodeBufferAndFormat) {
  Builder b;
  b.emit(R::CnaDataSize0{.datain_height = 64, .datain_width = 1});
  b.emit_raw(R::Block::cna, 0x1ffc, 7);  // not described
  b.finish(0x1000, 8);
  const auto writes = decode_buffer(b.entries());
  ASSERT_EQ(writes.size(), 6u);
  EXPECT_EQ(format(writes[0]), "CNA_DATA_SIZE0 0x1020 = 0x00010040 DATAIN_HEIGHT=64 DATAIN_WIDTH=1");
  EXPECT_EQ(format(writes[1]), "UNKNOWN CNA target 0x0201 reg 0x1ffc = 0x00000007");
  EXPECT_EQ(writes[1].reg, nullptr);
  EXPECT_EQ(format(writes[2]), "PC_BASE_ADDRESS 0x0010 = 0x00001000 PC_SEL=0 PC_SOURCE_ADDR=256");
  EXPECT_EQ(format(writes[3]), "PC_REGISTER_AMOUNTS 0x0014 = 0x00000003 PC_DATA_AMOUNT=3");
  EXPECT_EQ(format(writes[4]), "TRAILER_MARKER target 0x0041 reg 0x0000 = 0x00000000");
  EXPECT_EQ(format(writes[5]),
            "GLOBAL_OPERATION_ENABLE 0x0008 = 0x0000000d CNA_OP_EN=1 CORE_OP_EN=1 DPU_OP_EN=1 "
            "DPU_RDMA_OP_EN=0 PPU_OP_EN=0 PPU_RDMA_OP_EN=0");
  const std::vector<uint64_t> pad = {0};
  EXPECT_EQ(format(decode_buffer(pad)[0]), "PADDING");
}
