// Fuzz harness: a .npy file image through the header parser and the strict 2-D matrix reader
// (tools/common/npy_header.cpp, npy.cpp), for each dtype the tools read.
#include <cstddef>
#include <cstdint>
#include <span>

#include "tools/common/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using ork::tools::NpyDtype;
  const std::span<const uint8_t> file(data, size);
  (void)ork::tools::npy_parse_header(file, "fuzz.npy");
  for (NpyDtype d : {NpyDtype::int8, NpyDtype::int32, NpyDtype::fp32, NpyDtype::fp16})
    (void)ork::tools::npy_parse_matrix(file, d, "fuzz.npy");
  return 0;
}
