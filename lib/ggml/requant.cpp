// ggml's block formats (Q8_0, Q4_0, Q4_1) as the NPU runs them fast: dequantised at import with
// ggml's own dequantiser and requantised by libork to int8 with one scale per output row over
// the whole of K (ork_qweights_create, per-channel w8), so each call is one whole-K int8
// matmul on the NPU instead of one task per 32-wide block. The values change (a second
// rounding, to the row's grid); the error this adds is measured in docs/llama-cpp.md
// "Numerics". ORK_GGML_EXACT=1 keeps the blocks as they are (ork_qweights_import_ggml: the
// block scales exact, one NPU task per block). docs/llama-cpp.md "Two paths for ggml blocks".
#include <cstdlib>
#include <cstring>
#include <vector>

#include "ork_ggml.h"

namespace ork_ggml {

bool exact_blocks() {
  static const bool exact = [] {
    const char* v = std::getenv("ORK_GGML_EXACT");
    return v != nullptr && std::strcmp(v, "1") == 0;
  }();
  return exact;
}

// ggml's N rows of K blocks -> K x N row-major fp32 (what ork_qweights_create takes), a few
// rows at a time so the transpose writes whole cache lines of each output row's neighbours.
ork_status import_requantised(ork_device* dev, ggml_type type, const void* data, int64_t k, int64_t n,
                              ork_qweights** out) {
  const ggml_to_float_t to_float = ggml_get_type_traits(type)->to_float;
  if (to_float == nullptr) return ORK_E_UNSUPPORTED;
  constexpr int64_t kRows = 16;
  const size_t row_bytes = ggml_row_size(type, k);
  std::vector<float> w(static_cast<size_t>(k) * static_cast<size_t>(n));
  std::vector<float> rows(static_cast<size_t>(kRows * k));
  for (int64_t n0 = 0; n0 < n; n0 += kRows) {
    const int64_t count = n - n0 < kRows ? n - n0 : kRows;
    for (int64_t r = 0; r < count; ++r) {
      to_float(static_cast<const uint8_t*>(data) + static_cast<size_t>(n0 + r) * row_bytes, rows.data() + r * k, k);
    }
    for (int64_t i = 0; i < k; ++i) {
      float* dst = w.data() + i * n + n0;
      for (int64_t r = 0; r < count; ++r) dst[r] = rows[static_cast<size_t>(r * k + i)];
    }
  }
  ork_quant_options o{};
  o.struct_size = sizeof o;
  o.weight_bits = 8;
  o.group = 0;  // per-channel: one scale per output row of ggml's, over all of K
  return ork_qweights_create(dev, w.data(), k, n, &o, out);
}

// The window bytes of one imported K x N slice, as libork sizes them: the packed copy's bytes
// (ork_weights_packed_bytes, ork_qweights_packed_bytes) rounded up to the NPU window's 4 KiB
// pages, which each buffer takes (docs/library.md "Device memory"). fp16 weights (F16, BF16) are an fp16 ork_weights; the block formats the int8
// copy of their qweights: per-channel here, one scale per block of 32 with ORK_GGML_EXACT=1
// (ork_qweights_import_ggml's). 0 when libork cannot size the shape (it will not import it).
uint64_t packed_slice_bytes(ggml_type type, int64_t k, int64_t n) {
  constexpr uint64_t kPage = 4096;
  uint64_t bytes = 0;
  ork_status s;
  if (type == GGML_TYPE_F16 || type == GGML_TYPE_BF16) {
    s = ork_weights_packed_bytes(ORK_DTYPE_FP16, k, n, &bytes);
  } else {
    ork_quant_options o{};
    o.struct_size = sizeof o;
    o.weight_bits = exact_blocks() && type != GGML_TYPE_Q8_0 ? 4 : 8;
    o.group = exact_blocks() ? 32 : 0;
    s = ork_qweights_packed_bytes(k, n, &o, &bytes);
  }
  return s == ORK_OK ? (bytes + kPage - 1) / kPage * kPage : 0;
}

}  // namespace ork_ggml
