// Fuzz harness: a packed-weight blob (lib/api/weights_blob.h: the 64-byte header, then the
// NPU-native payload) through ork_weights_import_packed on the cpu device and on the emulated
// NPU. Each input runs twice: as given, and with both CRC-32s recomputed, so that the fuzzer
// also reaches the checks behind them (the dtype, K and N, the payload size, the unpacking).
// An accepted blob must round-trip: export(import(e)) == e for e = export(import(blob)).
// Errors are fine; a crash, a sanitizer report or a broken round trip is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>
#include <vector>

#include "lib/api/weights_blob.h"
#include "ork/ork.h"

namespace {

namespace blob = ork::api::blob;

std::vector<uint8_t> export_blob(const ork_weights* w) {
  size_t need = 0;
  if (ork_weights_export_packed(w, nullptr, 0, &need) != ORK_OK) std::abort();
  std::vector<uint8_t> out(need);
  if (ork_weights_export_packed(w, out.data(), out.size(), &need) != ORK_OK) std::abort();
  return out;
}

// Imports `b`; when accepted, checks the round trip on the same device.
void import_and_check(ork_device* dev, std::span<const uint8_t> b) {
  ork_weights* w = nullptr;
  if (ork_weights_import_packed(dev, b.data(), b.size(), &w) != ORK_OK) return;
  const std::vector<uint8_t> once = export_blob(w);
  ork_weights_destroy(w);
  ork_weights* again = nullptr;
  if (ork_weights_import_packed(dev, once.data(), once.size(), &again) != ORK_OK) std::abort();  // our own blob
  if (export_blob(again) != once) std::abort();
  ork_weights_destroy(again);
}

void put_u32(std::vector<uint8_t>& b, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) b[at + i] = static_cast<uint8_t>(v >> (8 * i));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static ork_device* const devices[2] = {
      [] { ork_device* d = nullptr; return ork_device_open("cpu", &d) == ORK_OK ? d : nullptr; }(),
      [] { ork_device* d = nullptr; return ork_device_open("emu", &d) == ORK_OK ? d : nullptr; }()};
  if (!devices[0] || !devices[1]) std::abort();
  std::vector<uint8_t> fixed(data, data + size);
  if (size >= blob::kHeaderBytes) {  // the CRCs as a writer would have put them
    uint64_t payload = 0;
    std::memcpy(&payload, data + blob::kOffPayloadBytes, 8);
    if (payload <= size - blob::kHeaderBytes)
      put_u32(fixed, blob::kOffPayloadCrc, blob::crc32({data + blob::kHeaderBytes, static_cast<size_t>(payload)}));
    put_u32(fixed, blob::kOffHeaderCrc, blob::crc32({fixed.data(), blob::kOffHeaderCrc}));
  }
  for (ork_device* dev : devices) {
    import_and_check(dev, {data, size});
    import_and_check(dev, fixed);
  }
  return 0;
}
