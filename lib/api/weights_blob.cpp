#include "lib/api/weights_blob.h"

#include <array>
#include <cstring>

#include <fmt/format.h>

namespace ork::api::blob {
namespace {

// tables[0] is the byte-wise CRC table; tables[j][b] advances tables[j-1][b] by one zero
// byte, so eight table look-ups consume eight input bytes at once.
using Tables = std::array<std::array<uint32_t, 256>, 8>;

Tables make_tables() {
  Tables t{};
  for (uint32_t b = 0; b < 256; ++b) {
    uint32_t c = b;
    for (int i = 0; i < 8; ++i) c = (c & 1) ? (c >> 1) ^ 0xEDB88320u : c >> 1;
    t[0][b] = c;
  }
  for (size_t j = 1; j < 8; ++j)
    for (uint32_t b = 0; b < 256; ++b) t[j][b] = (t[j - 1][b] >> 8) ^ t[0][t[j - 1][b] & 0xff];
  return t;
}

const Tables& tables() {
  static const Tables t = make_tables();
  return t;
}

uint32_t get32(std::span<const uint8_t> p, size_t at) {
  return uint32_t{p[at]} | uint32_t{p[at + 1]} << 8 | uint32_t{p[at + 2]} << 16 | uint32_t{p[at + 3]} << 24;
}
uint64_t get64(std::span<const uint8_t> p, size_t at) { return uint64_t{get32(p, at)} | uint64_t{get32(p, at + 4)} << 32; }
void put32(std::span<uint8_t> p, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[at + static_cast<size_t>(i)] = static_cast<uint8_t>(v >> (8 * i));
}
void put64(std::span<uint8_t> p, size_t at, uint64_t v) {
  put32(p, at, static_cast<uint32_t>(v));
  put32(p, at + 4, static_cast<uint32_t>(v >> 32));
}

}  // namespace

uint32_t crc32(std::span<const uint8_t> bytes, uint32_t crc) {
  const Tables& t = tables();
  uint32_t c = ~crc;
  const uint8_t* p = bytes.data();
  size_t n = bytes.size();
  for (; n >= 8; n -= 8, p += 8) {
    const uint32_t lo = c ^ (uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24);
    c = t[7][lo & 0xff] ^ t[6][(lo >> 8) & 0xff] ^ t[5][(lo >> 16) & 0xff] ^ t[4][lo >> 24] ^ t[3][p[4]] ^
        t[2][p[5]] ^ t[1][p[6]] ^ t[0][p[7]];
  }
  for (; n > 0; --n, ++p) c = (c >> 8) ^ t[0][(c ^ *p) & 0xff];
  return ~c;
}

void write_header(const Header& h, std::span<uint8_t> out) {
  std::memset(out.data(), 0, kHeaderBytes);
  std::memcpy(out.data() + kOffMagic, kMagic, 4);
  put32(out, kOffHeaderVersion, kHeaderVersion);
  put32(out, kOffHeaderBytes, static_cast<uint32_t>(kHeaderBytes));
  put32(out, kOffLayoutVersion, h.layout_version);
  put32(out, kOffDtype, h.dtype);
  put64(out, kOffK, static_cast<uint64_t>(h.k));
  put64(out, kOffN, static_cast<uint64_t>(h.n));
  put64(out, kOffPayloadBytes, h.payload_bytes);
  put32(out, kOffPayloadCrc, crc32(out.subspan(kHeaderBytes, static_cast<size_t>(h.payload_bytes))));
  put32(out, kOffHeaderCrc, crc32(out.first(kOffHeaderCrc)));
}

Result<Header> read_header(std::span<const uint8_t> b, uint32_t layout_version) {
  if (b.size() < kHeaderBytes)
    return make_error(-EINVAL, fmt::format("truncated header: the blob holds {} bytes, the header alone is {}", b.size(),
                                           kHeaderBytes));
  if (std::memcmp(b.data(), kMagic, 4) != 0)
    return make_error(-EINVAL, "bad magic: not a libork packed-weight blob (expected \"ORKW\")");
  if (const uint32_t v = get32(b, kOffHeaderVersion); v != kHeaderVersion)
    return make_error(-EINVAL, fmt::format("header version {}: this library reads header version {}", v, kHeaderVersion));
  if (const uint32_t stored = get32(b, kOffHeaderCrc), have = crc32(b.first(kOffHeaderCrc)); stored != have)
    return make_error(-EINVAL, fmt::format("header checksum mismatch (stored 0x{:08x}, computed 0x{:08x}): the header is "
                                           "corrupted", stored, have));
  if (const uint32_t hb = get32(b, kOffHeaderBytes); hb != kHeaderBytes)
    return make_error(-EINVAL, fmt::format("header_bytes = {}: header version {} has {}", hb, kHeaderVersion, kHeaderBytes));
  Header h;
  h.layout_version = get32(b, kOffLayoutVersion);
  if (h.layout_version != layout_version)
    return make_error(-EINVAL, fmt::format("layout version {}: this library packs weights in layout version {}; "
                                           "re-export the blob from the weights' source", h.layout_version, layout_version));
  h.dtype = get32(b, kOffDtype);
  h.k = static_cast<int64_t>(get64(b, kOffK));
  h.n = static_cast<int64_t>(get64(b, kOffN));
  h.payload_bytes = get64(b, kOffPayloadBytes);
  if (h.payload_bytes > b.size() - kHeaderBytes)
    return make_error(-EINVAL, fmt::format("truncated payload: the header announces {} payload bytes, the blob holds {} "
                                           "after the header", h.payload_bytes, b.size() - kHeaderBytes));
  if (h.payload_bytes < b.size() - kHeaderBytes)
    return make_error(-EINVAL, fmt::format("blob size {}: header and payload are {} bytes (trailing bytes)", b.size(),
                                           kHeaderBytes + h.payload_bytes));
  const auto payload = b.subspan(kHeaderBytes);
  if (const uint32_t stored = get32(b, kOffPayloadCrc), have = crc32(payload); stored != have)
    return make_error(-EINVAL, fmt::format("payload checksum mismatch (stored 0x{:08x}, computed 0x{:08x}): the payload is "
                                           "corrupted", stored, have));
  return h;
}

}  // namespace ork::api::blob
