// The generated register header: packers, truncation, lookups.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "driver/regs/npu_regs.h"

namespace R = ork::regs;

TEST(Regs, PackPutsFieldsAtTheirBits) {
  uint32_t v = 0;
  EXPECT_EQ((R::CnaDataSize0{.datain_height = 64, .datain_width = 1}.pack(v)), nullptr);
  EXPECT_EQ(v, 0x00010040u);
  EXPECT_EQ((R::CnaCbufCon0{.data_bank = 1, .weight_bank = 11}.pack(v)), nullptr);
  EXPECT_EQ(v, 0xb1u);  // ORK's captured 0xb1 = 11 weight banks, 1 data bank
  EXPECT_EQ((R::DpuDataFormat{.proc_precision = 6, .in_precision = 6, .out_precision = 1}.pack(v)), nullptr);
  EXPECT_EQ(v, 0x38000006u);  // the int4 capture's 0x4010 (docs/hardware.md section 9)
  EXPECT_EQ((R::CnaConvCon1{.conv_mode = 0, .in_precision = 6, .proc_precision = 6}.pack(v)), nullptr);
  EXPECT_EQ(v, 0x360u);  // the int4 capture's 0x100c
  EXPECT_EQ((R::DpuDstSurfStride{.dst_surf_stride = 3}.pack(v)), nullptr);
  EXPECT_EQ(v, 0x30u);  // bits 31:4
}

TEST(Regs, PackRejectsTheFirstOverflowingFieldByName) {
  uint32_t v = 0xdeadbeef;
  EXPECT_STREQ((R::CnaDataSize0{.datain_height = 2048, .datain_width = 1}.pack(v)), "DATAIN_HEIGHT");
  EXPECT_EQ(v, 0xdeadbeefu);  // untouched on failure
  EXPECT_EQ((R::CnaDataSize0{.datain_height = 2047, .datain_width = 1}.pack(v)), nullptr);
  EXPECT_STREQ((R::DpuDataCubeChannel{.channel = 8192}.pack(v)), "CHANNEL");
  EXPECT_EQ((R::DpuDataCubeChannel{.channel = 8191}.pack(v)), nullptr);
  EXPECT_STREQ((R::CnaWeightSize2{.weight_kernels = 16384}.pack(v)), "WEIGHT_KERNELS");
  EXPECT_STREQ((R::CnaConvCon2{.feature_grains = 1024}.pack(v)), "FEATURE_GRAINS");
  const auto o = R::CnaDataSize0{.datain_height = 4096, .datain_width = 0}.overflow();
  ASSERT_TRUE(o.has_value());
  EXPECT_EQ(o->value, 4096u);
  EXPECT_EQ(o->width, 11);
}

TEST(Regs, TruncatingPackKeepsWhatTheRegisterKeeps) {
  EXPECT_EQ((R::DpuDataCubeChannel{.channel = 16383}.pack_truncating()), 8191u);
  EXPECT_EQ((R::CnaDataSize0{.datain_height = 2048 + 5, .datain_width = 1}.pack_truncating()), 0x00010005u);
  EXPECT_EQ(R::DpuDataCubeChannel::unpack(16383).channel, 8191u);
}

TEST(Regs, UnpackInvertsPack) {
  const R::CnaConvCon2 c{.csc_do_en = 1, .feature_grains = 65, .kernel_group = 3};
  const auto back = R::CnaConvCon2::unpack(c.pack_truncating());
  EXPECT_EQ(back.csc_do_en, 1u);
  EXPECT_EQ(back.feature_grains, 65u);
  EXPECT_EQ(back.kernel_group, 3u);
  EXPECT_EQ(back.cmd_fifo_srst, 0u);
  EXPECT_EQ(R::CnaFeatureDataAddr::unpack(0xfedcba98).feature_base_addr, 0xfedcba98u);
}

TEST(Regs, TargetsAndOffsets) {
  EXPECT_EQ(R::target_of(R::Block::pc), 0x0101);
  EXPECT_EQ(R::target_of(R::Block::cna), 0x0201);
  EXPECT_EQ(R::target_of(R::Block::core), 0x0801);
  EXPECT_EQ(R::target_of(R::Block::dpu), 0x1001);
  EXPECT_EQ(R::target_of(R::Block::dpu_rdma), 0x2001);
  EXPECT_EQ(R::target_of(R::Block::ppu), 0x4001);
  EXPECT_EQ(R::target_of(R::Block::ppu_rdma), 0x8001);
  EXPECT_EQ(R::target_of(R::Block::global), 0x0081);
  EXPECT_EQ(R::CNA_DATA_SIZE0, 0x1020);
  EXPECT_EQ(R::CNA_CBUF_CON0, 0x1040);
  EXPECT_EQ(R::CNA_FEATURE_DATA_ADDR, 0x1070);
  EXPECT_EQ(R::CNA_DCOMP_ADDR0, 0x1110);
  EXPECT_EQ(R::CORE_MISC_CFG, 0x3010);
  EXPECT_EQ(R::DPU_DST_BASE_ADDR, 0x4020);
  EXPECT_EQ(R::DPU_DATA_CUBE_CHANNEL, 0x403c);
  EXPECT_EQ(R::DPU_OUT_CVT_SCALE, 0x4084);
  EXPECT_EQ(R::PC_BASE_ADDRESS, 0x0010);
  EXPECT_EQ(R::PC_REGISTER_AMOUNTS, 0x0014);
}

TEST(Regs, LookupsFindEveryRegisterOnce) {
  std::set<std::string> names;
  for (const R::RegInfo& r : R::all_regs()) {
    EXPECT_TRUE(names.insert(r.name).second) << r.name;
    EXPECT_EQ(R::find_reg(r.block, r.offset), &r);
    EXPECT_EQ(R::find_reg_for_target(R::target_of(r.block), r.offset), &r);
    EXPECT_EQ(R::find_reg(std::string_view(r.name)), &r);
    if (r.block != R::Block::global) {
      EXPECT_EQ(R::block_for_offset(r.offset)->block, r.block) << r.name;
    }
  }
  EXPECT_STREQ(R::find_reg(0x1020)->name, "CNA_DATA_SIZE0");
  EXPECT_STREQ(R::find_reg(0x0008)->name, "PC_OPERATION_ENABLE");
  EXPECT_STREQ(R::find_reg_for_target(0x0081, 0x0008)->name, "GLOBAL_OPERATION_ENABLE");
  EXPECT_EQ(R::find_reg(0x1ffc), nullptr);
  EXPECT_EQ(R::block_for_offset(0x2004), nullptr);  // the blob's 0x2xxx block is not described
}
