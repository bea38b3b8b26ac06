// Fuzz harness: a safetensors file image (8-byte little-endian header length, the JSON
// header, the data) through the same checks read_safetensors makes, then the header parser
// and the layer grouping. Errors are fine; a crash, a hang or a sanitizer report is a bug.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "lib/io/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 8) return 0;
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | data[i];  // little-endian u64, as on disk
  if (n > ork::io::kMaxHeaderBytes || n > size - 8) return 0;  // read_safetensors refuses these
  const std::string_view header(reinterpret_cast<const char*>(data) + 8, n);
  auto file = ork::io::parse_safetensors_header(header, size);
  if (!file) return 0;
  auto layout = ork::io::group_layers(*file);
  if (layout) (void)ork::io::layer_extents(*layout);
  return 0;
}
