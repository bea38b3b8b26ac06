#include "tests/driver/emu/npu/npu_fixture.h"

#include "driver/regs/matmul_fixed.h"

namespace ork::emu::testing {

namespace R = ork::regs;

void emit_body(regcmd::Builder& rc, const TaskSpec& t) {
  const uint32_t code = static_cast<uint32_t>(t.type);
  const uint32_t bits = t.type == Type::int8 ? 8 : t.type == Type::fp16 ? 16 : 4;
  const uint32_t out = t.type == Type::int8 ? 4 : t.type == Type::int4 ? 1 : (t.fp16_out ? 2 : 5);
  rc.emit(R::DpuSPointer{.pointer_pp_en = 1, .executer_pp_en = 1, .pointer_pp_mode = 1});
  rc.emit(R::CnaConvCon1{.conv_mode = 0, .in_precision = code, .proc_precision = code});
  rc.emit(R::CnaConvCon2{.feature_grains = std::min<uint32_t>(t.mc + 1, 1023)});
  rc.emit(R::CnaConvCon3{.conv_x_stride = 1, .conv_y_stride = 1});
  rc.emit(R::CnaDataSize0{.datain_height = t.mc, .datain_width = 1});
  rc.emit(R::CnaDataSize1{.datain_channel = t.kt, .datain_channel_real = t.kt - 1});
  rc.emit(R::CnaDataSize2{.dataout_width = 1});
  rc.emit(R::CnaDataSize3{.dataout_atomics = t.mc});
  rc.emit(R::CnaWeightSize0{.weight_bytes = static_cast<uint32_t>(uint64_t{t.kt} * t.nt * bits / 8)});
  rc.emit(R::CnaWeightSize1{.weight_bytes_per_kernel = t.kt * bits / 8});
  // KERNELS (14 bits) raw as well: a raw N = 16384 task keeps 0 there, like the hardware.
  rc.emit_raw(R::Block::cna, R::CNA_WEIGHT_SIZE2,
              R::CnaWeightSize2{.weight_kernels = t.nt, .weight_height = 1, .weight_width = 1}.pack_truncating());
  rc.emit(R::CnaCbufCon0{.data_bank = t.data_banks, .weight_bank = t.weight_banks});
  rc.emit(R::CnaCbufCon1{.data_entries = (t.kt * bits / 8 + 63) / 64});
  rc.emit(R::CnaFeatureDataAddr{.feature_base_addr = static_cast<uint32_t>(t.a)});
  rc.emit(R::CnaDmaCon1{.line_stride = 1});
  rc.emit(R::CnaDmaCon2{.surf_stride = t.a_surf});
  rc.emit(R::CnaDcompAddr0{.dcomp_addr0 = static_cast<uint32_t>(t.b)});
  rc.emit(R::CoreMiscCfg{.qd_en = t.type == Type::fp16 ? 1u : 0u, .proc_precision = code});
  rc.emit(R::CoreDataoutSize0{.dataout_width = 0, .dataout_height = t.mc - 1});
  rc.emit(R::CoreDataoutSize1{.dataout_channel = t.nt - 1});
  rc.emit(R::DpuDataFormat{.proc_precision = code, .in_precision = code, .out_precision = out});
  rc.emit(R::DpuDstBaseAddr{.dst_base_addr = static_cast<uint32_t>(t.c)});
  rc.emit(R::DpuDstSurfStride{.dst_surf_stride = t.c_surf});
  rc.emit(R::DpuDataCubeWidth{.width = 0});
  rc.emit(R::DpuDataCubeHeight{.height = t.mc - 1});
  // The DPU keeps 13 bits: emitted raw so tests can write what the checked packer refuses.
  rc.emit_raw(R::Block::dpu, R::DPU_DATA_CUBE_CHANNEL, (t.nt - 1) << 16 | (t.nt - 1));  // ORIG_CHANNEL, CHANNEL
  rc.emit(R::DpuOutCvtScale{.out_cvt_scale = 1, .fp32tofp16_en = t.fp16_out ? 1u : 0u});
  // The shape followers and the fixed matmul registers, as the library writes them
  // (driver/regs/matmul_fixed.h; the emulator refuses a task without them).
  rc.emit_raw(R::Block::cna, R::CNA_FC_DATA_SIZE0, (1u << 16) | (t.mc & 0x7ffu));
  rc.emit_raw(R::Block::cna, R::CNA_FC_DATA_SIZE1, t.kt & 0xffffu);
  rc.emit_raw(R::Block::dpu, R::DPU_BS_OW_CFG, R::dpu_bs_ow_cfg(out));
  rc.emit_raw(R::Block::dpu, R::DPU_WDMA_SIZE_0, (t.nt - 1) & 0x1fffu);
  rc.emit_raw(R::Block::dpu, R::DPU_WDMA_SIZE_1, ((t.mc - 1) & 0x1fffu) << 16);
  rc.emit(R::DpuSurfaceAdd{.surf_add = t.c_surf * R::dpu_surface_add_factor(out)});
  if (!t.skip_fixed)
    for (const R::FixedWrite& f : R::kMatmulFixed) rc.emit_raw(f.block, f.offset, f.value);
}

std::vector<uint64_t> one_task(const TaskSpec& t) {
  regcmd::Builder rc;
  emit_body(rc, t);
  rc.finish(0, 0, t.op_en);
  EXPECT_TRUE(rc.ok()) << rc.error();
  return {rc.entries().begin(), rc.entries().end()};
}

ChainResult run_one(Device& dev, const std::vector<uint64_t>& entries) {
  Bo& bo = dev.alloc(entries.size() * 8);
  std::memcpy(bo.bytes.data(), entries.data(), entries.size() * 8);
  return run_chain(dev.mem, 0, bo.iova, static_cast<uint32_t>(entries.size()), 1);
}

std::vector<uint8_t> pack_a_i8(const std::vector<int8_t>& a, size_t M, size_t K) {
  std::vector<uint8_t> out(M * K);
  for (size_t m = 0; m < M; ++m)
    for (size_t k = 0; k < K; ++k) out[(k / 16) * M * 16 + m * 16 + k % 16] = static_cast<uint8_t>(a[m * K + k]);
  return out;
}

std::vector<uint8_t> pack_b_i8(const std::vector<int8_t>& b, size_t K, size_t N) {
  std::vector<uint8_t> out(K * N);
  for (size_t k = 0; k < K; ++k)
    for (size_t n = 0; n < N; ++n)
      out[(n / 32) * 32 * K + (k / 32) * 1024 + (n % 32) * 32 + k % 32] = static_cast<uint8_t>(b[k * N + n]);
  return out;
}

std::vector<uint8_t> pack_a_f16(const std::vector<uint16_t>& a, size_t M, size_t K) {
  std::vector<uint8_t> out(M * K * 2);
  for (size_t m = 0; m < M; ++m)
    for (size_t k = 0; k < K; ++k)
      std::memcpy(out.data() + ((k / 8) * M * 8 + m * 8 + k % 8) * 2, &a[m * K + k], 2);
  return out;
}

std::vector<uint8_t> pack_b_f16(const std::vector<uint16_t>& b, size_t K, size_t N) {
  std::vector<uint8_t> out(K * N * 2);
  for (size_t k = 0; k < K; ++k)
    for (size_t n = 0; n < N; ++n)
      std::memcpy(out.data() + ((n / 16) * 16 * K + (k / 32) * 512 + (n % 16) * 32 + k % 32) * 2, &b[k * N + n], 2);
  return out;
}

namespace {
// Deliberately independent of driver/common/int4.h, which the emulator reads with: the
// fixture's own statement of the order (low nibble first) is the oracle it is checked by.
void put_nibble(std::vector<uint8_t>& out, size_t i, int8_t v) {
  const uint8_t nib = static_cast<uint8_t>(v) & 0x0f;
  out[i / 2] = i % 2 == 0 ? (out[i / 2] & 0xf0) | nib : (out[i / 2] & 0x0f) | (nib << 4);
}
}  // namespace

std::vector<uint8_t> pack_a_i4(const std::vector<int8_t>& a, size_t M, size_t K) {
  std::vector<uint8_t> out(M * K / 2);
  for (size_t m = 0; m < M; ++m)
    for (size_t k = 0; k < K; ++k) put_nibble(out, (k / 32) * M * 32 + m * 32 + k % 32, a[m * K + k]);
  return out;
}

std::vector<uint8_t> pack_b_i4(const std::vector<int8_t>& b, size_t K, size_t N) {
  std::vector<uint8_t> out(K * N / 2);
  for (size_t k = 0; k < K; ++k)
    for (size_t n = 0; n < N; ++n)
      put_nibble(out, (n / 64) * 64 * K + (k / 32) * 2048 + (n % 64) * 32 + k % 32, b[k * N + n]);
  return out;
}

Int8Bos alloc_int8(Device& dev, const std::vector<int8_t>& a, const std::vector<int8_t>& b, size_t M, size_t K,
                   size_t N, uint8_t c_fill, bool tracked) {
  Bo& A = dev.alloc(M * K, 0, tracked);
  Bo& B = dev.alloc(K * N, 0, tracked);
  Bo& C = dev.alloc(M * N * 4, c_fill, tracked);
  EXPECT_TRUE(dev.mem.write(A.iova, pack_a_i8(a, M, K).data(), M * K));
  EXPECT_TRUE(dev.mem.write(B.iova, pack_b_i8(b, K, N).data(), K * N));
  return {A, B, C};
}

std::vector<int8_t> random_i8(size_t n, uint32_t seed, int lo, int hi) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> d(lo, hi);
  std::vector<int8_t> v(n);
  for (auto& x : v) x = static_cast<int8_t>(d(rng));
  return v;
}

std::vector<int32_t> ref_matmul_i32(const std::vector<int8_t>& a, const std::vector<int8_t>& b,
                                    size_t M, size_t K, size_t N) {
  std::vector<int32_t> c(M * N, 0);
  for (size_t m = 0; m < M; ++m)
    for (size_t k = 0; k < K; ++k)
      for (size_t n = 0; n < N; ++n) c[m * N + n] += int32_t{a[m * K + k]} * int32_t{b[k * N + n]};
  return c;
}

}  // namespace ork::emu::testing
