// The AMX-INT8 micro-kernel (kernels.h): 32 x 32 int32 results in four 16 x 16 tiles.
// Facts (Intel SDM vol. 1 ch. 3.5 / ISA extensions reference, "Intel AMX"): 8 tile registers
// of up to 16 rows x 64 bytes; TDPBSSD adds, per row of A and column quad of B, four signed
// int8 x signed int8 products into int32 without saturation (exact). The tile configuration
// is per thread (LDTILECFG); Linux hands out the tile data state only after
// arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) (Documentation/arch/x86/xstate.rst).
#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>

#include "driver/common/cpu_features.h"
#include "lib/ref/amx_tiles.h"
#include "lib/ref/kernels.h"

namespace ork::ref::detail {

namespace {

constexpr int kArchReqXcompPerm = 0x1023;  // arch/x86/include/uapi/asm/prctl.h
constexpr int kXfeatureXtiledata = 18;     // XTILEDATA state component number
constexpr int kTileRows = kAmxTileRows;
constexpr int kTileBytes = kAmxTileBytes;

// Tiles 0-3: C (rows 0-15 / 16-31 x columns 0-15 / 16-31); 4-5: A (two 16-row blocks, 64 K
// bytes each); 6-7: B (16 K-quads x 16 columns x 4 bytes).
__attribute__((target("amx-tile,amx-int8")))
void amx_thread_begin() {
  TileConfig cfg;
  for (int t = 0; t < 8; ++t) {
    cfg.rows[t] = kTileRows;
    cfg.colsb[t] = kTileBytes;
  }
  load_tile_config(cfg);
}

__attribute__((target("amx-tile,amx-int8")))
void amx_thread_end() { release_tiles(); }

// Panel layout [groups][32 columns][4 bytes] = 128 bytes per K-quad: the B tile of columns
// 0-15 is every row's first 64 bytes (stride 128), columns 16-31 the second 64.
__attribute__((target("amx-tile,amx-int8")))
void micro_amx(const uint8_t* a, int64_t lda, const uint8_t* bp, int64_t groups, int32_t* out,
               bool accumulate) {
  constexpr int64_t kLdc = 32 * sizeof(int32_t);
  if (accumulate) {
    _tile_loadd(0, out, kLdc);
    _tile_loadd(1, out + 16, kLdc);
    _tile_loadd(2, out + 16 * 32, kLdc);
    _tile_loadd(3, out + 16 * 32 + 16, kLdc);
  } else {
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
  }
  (void)lda;  // A is tiled: [K/64][32 rows][64 bytes], see fast.cpp pack_a
  for (int64_t g = 0; g < groups; g += kTileRows, a += 32 * kTileBytes) {  // 64 K per step
    _tile_loadd(4, a, kTileBytes);
    _tile_loadd(5, a + kTileRows * kTileBytes, kTileBytes);
    _tile_loadd(6, bp + g * 128, 128);
    _tile_loadd(7, bp + g * 128 + 64, 128);
    _tile_dpbssd(0, 4, 6);
    _tile_dpbssd(1, 4, 7);
    _tile_dpbssd(2, 5, 6);
    _tile_dpbssd(3, 5, 7);
  }
  _tile_stored(0, out, kLdc);
  _tile_stored(1, out + 16, kLdc);
  _tile_stored(2, out + 16 * 32, kLdc);
  _tile_stored(3, out + 16 * 32 + 16, kLdc);
}

// Short M goes to VNNI's rows kernel over the same panels (kernels.h micro_rows; fast.cpp
// checks that the CPU has VNNI): a 32-row tile at M = 1 is 31/32 padding.
constexpr Kernel kAmx{Isa::amx, 32, 32, AFormat::s8, 16, 64, 128, micro_amx, amx_thread_begin, amx_thread_end,
                      vnni_rows, kVnniShortM, Isa::avx512_vnni, add_bias_avx512};

}  // namespace

bool amx_usable() {
  // The CPU's AMX bits (cpu_features.h: the detected ones, so hiding AMX in a test does not
  // skip the grant for a later call), then the OS's grant, asked once.
  static const bool usable = (cpu::detected_cpu_features() & cpu::kAmxInt8) != 0 &&
                             syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
  return usable;
}

const Kernel& amx_kernel() { return kAmx; }

}  // namespace ork::ref::detail
