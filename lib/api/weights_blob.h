// The packed-weight blob (docs/dtypes.md "Packed-weight blobs"): a 64-byte little-endian
// header, then the weights' NPU-native bytes. Format and checks only; no device here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "driver/common/result.h"

namespace ork::api::blob {

inline constexpr uint8_t kMagic[4] = {'O', 'R', 'K', 'W'};
inline constexpr uint32_t kHeaderVersion = 1;
inline constexpr size_t kHeaderBytes = 64;

// Byte offsets of the header fields (the table in docs/dtypes.md).
enum Offset : size_t {
  kOffMagic = 0,          // 4 bytes "ORKW"
  kOffHeaderVersion = 4,  // u32
  kOffHeaderBytes = 8,    // u32, 64
  kOffLayoutVersion = 12, // u32, matmul::kWeightLayoutVersion of the writer
  kOffDtype = 16,         // u32, ork_dtype
  kOffReserved0 = 20,     // u32, 0
  kOffK = 24,             // i64
  kOffN = 32,             // i64
  kOffPayloadBytes = 40,  // u64
  kOffPayloadCrc = 48,    // u32, CRC-32 of the payload
  kOffReserved1 = 52,     // 8 bytes, 0
  kOffHeaderCrc = 60,     // u32, CRC-32 of bytes 0..59 (so it covers the payload's CRC too)
};

struct Header {
  uint32_t layout_version = 0;
  uint32_t dtype = 0;
  int64_t k = 0, n = 0;
  uint64_t payload_bytes = 0;
};

// CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320, init and final xor 0xFFFFFFFF: the
// zlib / PNG CRC; check value crc32("123456789") = 0xCBF43926), slicing by 8 bytes.
uint32_t crc32(std::span<const uint8_t> bytes, uint32_t crc = 0);

// Writes the header for `h` and a payload already in place at out[kHeaderBytes ..].
void write_header(const Header& h, std::span<uint8_t> out);
// Parses and checks everything that needs no device: size, magic, versions, header CRC,
// that the blob holds the whole payload, the payload CRC. Errors name the field.
Result<Header> read_header(std::span<const uint8_t> blob, uint32_t layout_version);

}  // namespace ork::api::blob
