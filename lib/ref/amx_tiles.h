// AMX's tile configuration, shared by lib/ref's int8 tiles (kernel_amx.cpp) and lib/quant's
// groups on tiles (group_kernel_amx.cpp). Facts (Intel SDM vol. 1 ch. 3.5, "Intel AMX";
// ISA extensions reference, LDTILECFG): 8 tile registers of up to 16 rows x 64 bytes; the
// configuration is per thread and TILERELEASE returns the state to its initial (unused) form.
#pragma once

#include <cstdint>

namespace ork::ref::detail {

inline constexpr int kAmxTileRows = 16;   // rows of a tile register at most
inline constexpr int kAmxTileBytes = 64;  // bytes of a tile row at most: 16 int32 or 64 int8

}  // namespace ork::ref::detail

#if defined(__x86_64__)
namespace ork::ref::detail {

// LDTILECFG's 64-byte memory operand: palette, start_row, 14 reserved bytes,
// 16 x colsb (u16, bytes per row), 16 x rows (u8).
struct alignas(64) TileConfig {
  uint8_t palette = 1;
  uint8_t start_row = 0;
  uint8_t reserved0[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};
static_assert(sizeof(TileConfig) == 64);

// Not _tile_loadconfig: GCC 12's version names only the first 8 bytes of the operand as read,
// so the compiler may drop the stores to colsb/rows before it (we saw LDTILECFG #GP). This
// operand is the whole 64-byte struct. Call only where amx_usable() (kernels.h) said yes.
inline void load_tile_config(const TileConfig& cfg) { __asm__ volatile("ldtilecfg %0" ::"m"(cfg)); }

// The tile state back to unused (TILERELEASE), so a context switch saves no tile data.
inline void release_tiles() { __asm__ volatile("tilerelease" ::: "memory"); }

}  // namespace ork::ref::detail
#endif
