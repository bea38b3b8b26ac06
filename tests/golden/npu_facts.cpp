// The facts of npu_facts.h. Field positions: XML (Mesa registers.xml @ 5b829658f74f), one
// line per register as [name, lsb, width] = [bitfield name, low, high - low + 1]; reserved
// ranges are left out (fields_of reports them as "(other bits)").
#include "npu_facts.h"

#include <cstring>
#include <iterator>

namespace golden {
namespace {

// XML <enum name="target">: PC 0x100, CNA 0x200, CORE 0x800, DPU 0x1000, DPU_RDMA 0x2000,
// PPU 0x4000, PPU_RDMA 0x8000; the word carries enum + 1 (RGC emit). Windows: XML domains.
constexpr BlockFact kBlocks[] = {
    {"PC", 0x0101, 0x0000},   {"CNA", 0x0201, 0x1000},      {"CORE", 0x0801, 0x3000},
    {"DPU", 0x1001, 0x4000},  {"DPU_RDMA", 0x2001, 0x5000}, {"PPU", 0x4001, 0x6000},
    {"PPU_RDMA", 0x8001, 0x7000},
};

std::vector<FieldFact> s_pointer() {
  return {{"POINTER", 0, 1},          {"POINTER_PP_EN", 1, 1},    {"EXECUTER_PP_EN", 2, 1},
          {"POINTER_PP_MODE", 3, 1},  {"POINTER_PP_CLEAR", 4, 1}, {"EXECUTER_PP_CLEAR", 5, 1},
          {"EXECUTER", 16, 1}};
}
std::vector<FieldFact> whole(const std::string& name) { return {{name, 0, 32}}; }
std::vector<FieldFact> stage_cfg(const std::string& p) {  // BS_CFG and BN_CFG share a layout
  return {{p + "_BYPASS", 0, 1},    {p + "_ALU_BYPASS", 1, 1}, {p + "_MUL_BYPASS", 4, 1},
          {p + "_MUL_PRELU", 5, 1}, {p + "_RELU_BYPASS", 6, 1}, {p + "_RELUX_EN", 7, 1},
          {p + "_ALU_SRC", 8, 1},   {p + "_ALU_ALGO", 16, 4}};
}

// PC: the trailer's chain entries.
std::vector<RegFact> pc_regs() {
  return {
      {"PC", 0x0010, "BASE_ADDRESS", {{"PC_SEL", 0, 1}, {"PC_SOURCE_ADDR", 4, 28}}},
      {"PC", 0x0014, "REGISTER_AMOUNTS", {{"PC_DATA_AMOUNT", 0, 16}}},
  };
}

// CNA: the convolution input and weight fetch.
std::vector<RegFact> cna_regs() {
  return {
      {"CNA", 0x1004, "S_POINTER", s_pointer()},
      {"CNA", 0x100c, "CONV_CON1", {{"CONV_MODE", 0, 4}, {"IN_PRECISION", 4, 3}, {"PROC_PRECISION", 7, 3},
                                    {"ARGB_IN", 12, 4}, {"DECONV", 16, 1}, {"GROUP_LINE_OFF", 29, 1},
                                    {"NONALIGN_DMA", 30, 1}}},
      {"CNA", 0x1010, "CONV_CON2", {{"CMD_FIFO_SRST", 0, 1}, {"CSC_DO_EN", 1, 1}, {"CSC_WO_EN", 2, 1},
                                    {"FEATURE_GRAINS", 4, 10}, {"KERNEL_GROUP", 16, 8}}},
      {"CNA", 0x1014, "CONV_CON3", {{"CONV_X_STRIDE", 0, 3}, {"CONV_Y_STRIDE", 3, 3}, {"DECONV_X_STRIDE", 8, 3},
                                    {"DECONV_Y_STRIDE", 11, 3}, {"ATROUS_X_DILATION", 16, 5},
                                    {"ATROUS_Y_DILATION", 21, 5}, {"NN_MODE", 28, 3}}},
      {"CNA", 0x1020, "DATA_SIZE0", {{"DATAIN_HEIGHT", 0, 11}, {"DATAIN_WIDTH", 16, 11}}},
      {"CNA", 0x1024, "DATA_SIZE1", {{"DATAIN_CHANNEL", 0, 16}, {"DATAIN_CHANNEL_REAL", 16, 14}}},
      {"CNA", 0x1028, "DATA_SIZE2", {{"DATAOUT_WIDTH", 0, 11}}},
      {"CNA", 0x102c, "DATA_SIZE3", {{"DATAOUT_ATOMICS", 0, 22}, {"SURF_MODE", 22, 2}}},
      {"CNA", 0x1030, "WEIGHT_SIZE0", whole("WEIGHT_BYTES")},
      {"CNA", 0x1034, "WEIGHT_SIZE1", {{"WEIGHT_BYTES_PER_KERNEL", 0, 19}}},
      {"CNA", 0x1038, "WEIGHT_SIZE2", {{"WEIGHT_KERNELS", 0, 14}, {"WEIGHT_HEIGHT", 16, 5}, {"WEIGHT_WIDTH", 24, 5}}},
      {"CNA", 0x1040, "CBUF_CON0", {{"DATA_BANK", 0, 4}, {"WEIGHT_BANK", 4, 4}, {"FC_DATA_BANK", 8, 3},
                                    {"DATA_REUSE", 12, 1}, {"WEIGHT_REUSE", 13, 1}}},
      {"CNA", 0x1044, "CBUF_CON1", {{"DATA_ENTRIES", 0, 14}}},
      {"CNA", 0x104c, "CVT_CON0", {{"CVT_BYPASS", 0, 1}, {"CVT_TYPE", 1, 1}, {"ROUND_TYPE", 2, 1}, {"DATA_SIGN", 3, 1},
                                   {"CVT_TRUNCATE_0", 4, 6}, {"CVT_TRUNCATE_1", 10, 6}, {"CVT_TRUNCATE_2", 16, 6},
                                   {"CVT_TRUNCATE_3", 22, 6}}},
      {"CNA", 0x1050, "CVT_CON1", {{"CVT_OFFSET0", 0, 16}, {"CVT_SCALE0", 16, 16}}},
      {"CNA", 0x1054, "CVT_CON2", {{"CVT_OFFSET1", 0, 16}, {"CVT_SCALE1", 16, 16}}},
      {"CNA", 0x1058, "CVT_CON3", {{"CVT_OFFSET2", 0, 16}, {"CVT_SCALE2", 16, 16}}},
      {"CNA", 0x105c, "CVT_CON4", {{"CVT_OFFSET3", 0, 16}, {"CVT_SCALE3", 16, 16}}},
      {"CNA", 0x1060, "FC_CON0", {{"FC_SKIP_EN", 0, 1}, {"FC_SKIP_DATA", 16, 16}}},
      {"CNA", 0x1064, "FC_CON1", {{"DATA_OFFSET", 0, 17}}},
      {"CNA", 0x1068, "PAD_CON0", {{"PAD_TOP", 0, 4}, {"PAD_LEFT", 4, 4}}},
      {"CNA", 0x1070, "FEATURE_DATA_ADDR", whole("FEATURE_BASE_ADDR")},
      {"CNA", 0x1074, "FC_CON2", {{"WEIGHT_OFFSET", 0, 17}}},
      {"CNA", 0x1078, "DMA_CON0", {{"DATA_BURST_LEN", 0, 4}, {"WEIGHT_BURST_LEN", 16, 4}, {"OV4K_BYPASS", 31, 1}}},
      {"CNA", 0x107c, "DMA_CON1", {{"LINE_STRIDE", 0, 28}}},
      {"CNA", 0x1080, "DMA_CON2", {{"SURF_STRIDE", 0, 28}}},
      {"CNA", 0x1084, "FC_DATA_SIZE0", {{"DMA_HEIGHT", 0, 11}, {"DMA_WIDTH", 16, 14}}},
      {"CNA", 0x1088, "FC_DATA_SIZE1", {{"DMA_CHANNEL", 0, 16}}},
      {"CNA", 0x1100, "DCOMP_CTRL", {{"DECOMP_CONTROL", 0, 3}, {"WT_DEC_BYPASS", 3, 1}}},
      {"CNA", 0x1104, "DCOMP_REGNUM", whole("DCOMP_REGNUM")},
      {"CNA", 0x1110, "DCOMP_ADDR0", whole("DECOMPRESS_ADDR0")},
      {"CNA", 0x1180, "CVT_CON5", whole("PER_CHANNEL_CVT_EN")},
      {"CNA", 0x1184, "PAD_CON1", whole("PAD_VALUE")},
  };
}

// CORE: the multiply-accumulate array's output.
std::vector<RegFact> core_regs() {
  return {
      {"CORE", 0x3004, "S_POINTER", s_pointer()},
      {"CORE", 0x3010, "MISC_CFG", {{"QD_EN", 0, 1}, {"DW_EN", 1, 1}, {"PROC_PRECISION", 8, 3}, {"SOFT_GATING", 14, 6}}},
      {"CORE", 0x3014, "DATAOUT_SIZE_0", {{"DATAOUT_WIDTH", 0, 16}, {"DATAOUT_HEIGHT", 16, 16}}},
      {"CORE", 0x3018, "DATAOUT_SIZE_1", {{"DATAOUT_CHANNEL", 0, 16}}},
      {"CORE", 0x301c, "CLIP_TRUNCATE", {{"CLIP_TRUNCATE", 0, 5}, {"ROUND_TYPE", 6, 1}}},
      {"CORE", 0x3030, "UNKNOWN_3030", whole("VALUE")},  // MTX CORE_3030; RGC emit_raw(CORE|1, 0x3030, 0)
  };
}

// DPU: the output pipeline (BS, BN, EW stages, the output conversion).
std::vector<RegFact> dpu_regs() {
  return {
      {"DPU", 0x4004, "S_POINTER", s_pointer()},
      {"DPU", 0x400c, "FEATURE_MODE_CFG", {{"FLYING_MODE", 0, 1}, {"OUTPUT_MODE", 1, 2}, {"CONV_MODE", 3, 2},
                                           {"BURST_LEN", 5, 4}, {"SURF_LEN", 9, 16}, {"NONALIGN", 25, 1},
                                           {"RGP_TYPE", 26, 4}, {"TP_EN", 30, 1}, {"COMB_USE", 31, 1}}},
      {"DPU", 0x4010, "DATA_FORMAT", {{"PROC_PRECISION", 0, 3}, {"MC_SURF_OUT", 3, 1}, {"BS_MUL_SHIFT_VALUE_NEG", 4, 6},
                                      {"BN_MUL_SHIFT_VALUE_NEG", 10, 6}, {"EW_TRUNCATE_NEG", 16, 10},
                                      {"IN_PRECISION", 26, 3}, {"OUT_PRECISION", 29, 3}}},
      {"DPU", 0x4014, "OFFSET_PEND", {{"OFFSET_PEND", 0, 16}}},
      {"DPU", 0x4020, "DST_BASE_ADDR", whole("DST_BASE_ADDR")},
      {"DPU", 0x4024, "DST_SURF_STRIDE", {{"DST_SURF_STRIDE", 4, 28}}},
      {"DPU", 0x4030, "DATA_CUBE_WIDTH", {{"WIDTH", 0, 13}}},
      {"DPU", 0x4034, "DATA_CUBE_HEIGHT", {{"HEIGHT", 0, 13}, {"MINMAX_CTL", 22, 3}}},
      {"DPU", 0x4038, "DATA_CUBE_NOTCH_ADDR", {{"NOTCH_ADDR_0", 0, 13}, {"NOTCH_ADDR_1", 16, 13}}},
      {"DPU", 0x403c, "DATA_CUBE_CHANNEL", {{"CHANNEL", 0, 13}, {"ORIG_CHANNEL", 16, 13}}},
      {"DPU", 0x4040, "BS_CFG", stage_cfg("BS")},
      {"DPU", 0x4044, "BS_ALU_CFG", whole("BS_ALU_OPERAND")},
      {"DPU", 0x4048, "BS_MUL_CFG", {{"BS_MUL_SRC", 0, 1}, {"BS_TRUNCATE_SRC", 1, 1}, {"BS_MUL_SHIFT_VALUE", 8, 6},
                                     {"BS_MUL_OPERAND", 16, 16}}},
      {"DPU", 0x404c, "BS_RELUX_CMP_VALUE", whole("BS_RELUX_CMP_DAT")},
      {"DPU", 0x4050, "BS_OW_CFG", {{"OW_SRC", 0, 1}, {"OD_BYPASS", 1, 1}, {"SIZE_E_0", 2, 3}, {"SIZE_E_1", 5, 3},
                                    {"SIZE_E_2", 8, 3}, {"TP_ORG_EN", 27, 1}, {"RGP_CNTER", 28, 4}}},
      {"DPU", 0x4054, "BS_OW_OP", {{"OW_OP", 0, 16}}},
      {"DPU", 0x4058, "WDMA_SIZE_0", {{"CHANNEL_WDMA", 0, 13}, {"SIZE_C_WDMA", 16, 11}, {"TP_PRECISION", 27, 1}}},
      {"DPU", 0x405c, "WDMA_SIZE_1", {{"WIDTH_WDMA", 0, 13}, {"HEIGHT_WDMA", 16, 13}}},
      {"DPU", 0x4060, "BN_CFG", stage_cfg("BN")},
      {"DPU", 0x4064, "BN_ALU_CFG", whole("BN_ALU_OPERAND")},
      {"DPU", 0x4068, "BN_MUL_CFG", {{"BN_MUL_SRC", 0, 1}, {"BN_TRUNCATE_SRC", 1, 1}, {"BN_MUL_SHIFT_VALUE", 8, 6},
                                     {"BN_MUL_OPERAND", 16, 16}}},
      {"DPU", 0x406c, "BN_RELUX_CMP_VALUE", whole("BN_RELUX_CMP_DAT")},
      {"DPU", 0x4070, "EW_CFG", {{"EW_BYPASS", 0, 1}, {"EW_OP_BYPASS", 1, 1}, {"EW_OP_TYPE", 2, 1},
                                 {"EW_MUL_PRELU", 5, 1}, {"EW_OP_SRC", 6, 1}, {"EW_LUT_BYPASS", 7, 1},
                                 {"EW_OP_CVT_BYPASS", 8, 1}, {"EW_RELU_BYPASS", 9, 1}, {"EW_RELUX_EN", 10, 1},
                                 {"EW_ALU_ALGO", 16, 4}, {"EW_BINARY_EN", 20, 1}, {"EW_EQUAL_EN", 21, 1},
                                 {"EDATA_SIZE", 22, 2}, {"EW_DATA_MODE", 28, 2}, {"EW_CVT_ROUND", 30, 1},
                                 {"EW_CVT_TYPE", 31, 1}}},
      {"DPU", 0x4074, "EW_CVT_OFFSET_VALUE", whole("EW_OP_CVT_OFFSET")},
      {"DPU", 0x4078, "EW_CVT_SCALE_VALUE", {{"EW_OP_CVT_SCALE", 0, 16}, {"EW_OP_CVT_SHIFT", 16, 6}, {"EW_TRUNCATE", 22, 10}}},
      {"DPU", 0x407c, "EW_RELUX_CMP_VALUE", whole("EW_RELUX_CMP_DAT")},
      {"DPU", 0x4080, "OUT_CVT_OFFSET", whole("OUT_CVT_OFFSET")},
      {"DPU", 0x4084, "OUT_CVT_SCALE", {{"OUT_CVT_SCALE", 0, 16}, {"FP32TOFP16_EN", 16, 1}}},
      {"DPU", 0x4088, "OUT_CVT_SHIFT", {{"OUT_CVT_SHIFT", 0, 12}, {"MINUS_EXP", 12, 8}, {"CVT_ROUND", 30, 1}, {"CVT_TYPE", 31, 1}}},
      {"DPU", 0x40c0, "SURFACE_ADD", {{"SURF_ADD", 4, 28}}},
      {"DPU", 0x40c4, "UNKNOWN_40C4", whole("VALUE")},  // MTX DPU_40C4 ("not documented")
  };
}

// DPU's lookup table (LUT) registers.
std::vector<RegFact> dpu_lut_regs() {
  return {
      {"DPU", 0x4100, "LUT_ACCESS_CFG", {{"LUT_ADDR", 0, 10}, {"LUT_TABLE_ID", 16, 1}, {"LUT_ACCESS_TYPE", 17, 1}}},
      {"DPU", 0x4104, "LUT_ACCESS_DATA", {{"LUT_ACCESS_DATA", 0, 16}}},
      {"DPU", 0x4108, "LUT_CFG", {{"LUT_ROAD_SEL", 0, 1}, {"LUT_EXPAND_EN", 1, 1}, {"LUT_LO_LE_MUX", 2, 2},
                                  {"LUT_UFLOW_PRIORITY", 4, 1}, {"LUT_OFLOW_PRIORITY", 5, 1},
                                  {"LUT_HYBRID_PRIORITY", 6, 1}, {"LUT_CAL_SEL", 7, 1}}},
      {"DPU", 0x410c, "LUT_INFO", {{"LUT_LE_INDEX_SELECT", 8, 8}, {"LUT_LO_INDEX_SELECT", 16, 8}}},
      {"DPU", 0x4110, "LUT_LE_START", whole("LUT_LE_START")},
      {"DPU", 0x4114, "LUT_LE_END", whole("LUT_LE_END")},
      {"DPU", 0x4118, "LUT_LO_START", whole("LUT_LO_START")},
      {"DPU", 0x411c, "LUT_LO_END", whole("LUT_LO_END")},
      {"DPU", 0x4120, "LUT_LE_SLOPE_SCALE", {{"LUT_LE_SLOPE_UFLOW_SCALE", 0, 16}, {"LUT_LE_SLOPE_OFLOW_SCALE", 16, 16}}},
      {"DPU", 0x4124, "LUT_LE_SLOPE_SHIFT", {{"LUT_LE_SLOPE_UFLOW_SHIFT", 0, 5}, {"LUT_LE_SLOPE_OFLOW_SHIFT", 5, 5}}},
      {"DPU", 0x4128, "LUT_LO_SLOPE_SCALE", {{"LUT_LO_SLOPE_UFLOW_SCALE", 0, 16}, {"LUT_LO_SLOPE_OFLOW_SCALE", 16, 16}}},
      {"DPU", 0x412c, "LUT_LO_SLOPE_SHIFT", {{"LUT_LO_SLOPE_UFLOW_SHIFT", 0, 5}, {"LUT_LO_SLOPE_OFLOW_SHIFT", 5, 5}}},
  };
}

// The whole table: each block's rows, then the register arrays.
std::vector<RegFact> build_table() {
  std::vector<RegFact> t;
  for (auto part : {pc_regs, cna_regs, core_regs, dpu_regs, dpu_lut_regs}) {
    std::vector<RegFact> rows = part();
    t.insert(t.end(), std::make_move_iterator(rows.begin()), std::make_move_iterator(rows.end()));
  }
  // XML DCOMP_AMOUNT0..15 at 0x1140 + 4i and EW_OP_VALUE_0..7 at 0x4090 + 4i: one 32-bit
  // field each.
  for (int i = 0; i < 16; ++i) {
    const std::string n = "DCOMP_AMOUNT" + std::to_string(i);
    t.push_back({"CNA", static_cast<uint16_t>(0x1140 + 4 * i), n, {{n, 0, 32}}});
  }
  for (int i = 0; i < 8; ++i) {
    t.push_back({"DPU", static_cast<uint16_t>(0x4090 + 4 * i), "EW_OP_VALUE_" + std::to_string(i),
                 {{"EW_OPERAND_" + std::to_string(i), 0, 32}}});
  }
  return t;
}

const std::vector<RegFact>& table() {
  static const std::vector<RegFact> t = build_table();
  return t;
}

}  // namespace

const BlockFact* block_for_target(uint16_t target) {
  for (const BlockFact& b : kBlocks)
    if (b.target == target) return &b;
  return nullptr;
}

const RegFact* find_reg(const char* block, uint16_t offset) {
  for (const RegFact& r : table())
    if (r.offset == offset && std::strcmp(r.block, block) == 0) return &r;
  return nullptr;
}

const RegFact* find_reg(const std::string& key) {
  for (const RegFact& r : table())
    if (key == std::string(r.block) + "." + r.name) return &r;
  return nullptr;
}

std::vector<FieldValue> fields_of(const RegFact& reg, uint32_t value) {
  std::vector<FieldValue> out;
  uint32_t covered = 0;
  for (const FieldFact& f : reg.fields) {
    const uint32_t mask = f.width >= 32 ? 0xffffffffu : ((1u << f.width) - 1u);
    out.push_back({f.name, (value >> f.lsb) & mask});
    covered |= mask << f.lsb;
  }
  out.push_back({"(other bits)", value & ~covered});
  return out;
}

Decoded decode(uint64_t w) {
  Decoded d;
  d.word = split(w);
  if (w == 0) {
    d.key = "PADDING";
    return d;
  }
  if (d.word.target == kTargetMarker) {
    d.key = "MARKER";
    if (d.word.value != 0 || d.word.reg != 0) d.error = "marker word with a value or register";
    return d;
  }
  if (d.word.target == kTargetOpEnable) {
    d.key = "OP_ENABLE";
    if (d.word.reg != 0x0008) d.error = "op-enable word not at register 0x0008";
    return d;
  }
  const BlockFact* b = block_for_target(d.word.target);
  if (b == nullptr) {
    d.error = "unknown target";
    return d;
  }
  if (d.word.reg < b->window_base || d.word.reg > b->window_base + 0xfff) {
    d.error = std::string("register outside the ") + b->name + " window";
    return d;
  }
  d.reg = find_reg(b->name, d.word.reg);
  if (d.reg == nullptr) {
    d.error = std::string("no ") + b->name + " register at this offset";
    return d;
  }
  d.key = std::string(b->name) + "." + d.reg->name;
  return d;
}

}  // namespace golden
