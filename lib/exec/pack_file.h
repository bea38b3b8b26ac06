// The packed model file (docs/execution.md "The packed model file"): what ork_pack writes
// and the executor streams. Every tensor is already in the NPU-native weight layout of its
// K-slices (lib/matmul plan.h: the layout depends on dtype, K and N only), so a read lands
// in a buffer that is ready to use, with no repacking. Layout:
//
//   [0, 4096)          header (below), little-endian
//   [4096, data)       the description: JSON {"model": <model description>, "tensors": [...]}
//   [data, end)        tensors, each starting on a 4 KiB boundary (O_DIRECT alignment:
//                      every device's logical block size divides it), zero padded; per
//                      tensor its packed weights, then (real models quantised from floats)
//                      its per-column fp32 scales, also 4 KiB aligned.
//
// The header: magic "ORKPACK\0", u32 version (5), u32 header bytes (4096), u64 JSON offset,
// u64 JSON bytes, u64 data offset, u64 file bytes, u64 FNV-1a of the JSON, u64 FNV-1a of the
// 56 bytes before it. Each is checked on open, and the file's size against the header.
//
// The tensor table: per tensor [layer, matmul, offset, bytes, scale offset, scale bytes,
// slice_k]; slice_k is an int4 tensor's K-slice width (its layout, chosen from its own
// weights' bound when packed: lib/matmul/int4_bound.h), 0 for other dtypes. Version 2 files
// have no slice_k (rows of six): their int4 tensors are 480 wide, the dtype's floor.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "driver/common/result.h"
#include "driver/common/safe_file.h"
#include "lib/exec/model.h"

namespace ork::exec {

inline constexpr char kPackMagic[8] = {'O', 'R', 'K', 'P', 'A', 'C', 'K', '\0'};
// Version 2: the checksums are standard FNV-1a (version 1 used a basis one digit short;
// lib/exec/activation.h). A version 1 file is refused with a message that says to repack it.
// Version 3: each tensor's int4 K-slice width in the tensor table.
// Version 4: an int4 tensor of its own width past 480 has every K-slice full (matmul::
// PlanOptions::slice_k: the slices evened out, K zero padded), so all of them stack.
// Version 5: an int8 tensor of K past 4096 is in the fewest K-slices of at most 3072, evened
// out (matmul::slice_width), where older versions have slices of 2048 and a rest.
// Versions 2 to 5 are read, except a tensor an older version laid out otherwise: a version 3
// int4 tensor of such a width whose last slice is narrower, a version 2 to 4 int8 tensor of K
// past 4096; each refused naming the version, to be repacked.
inline constexpr uint32_t kPackVersion = 5;
inline constexpr uint32_t kPackOldestVersion = 2;
inline constexpr uint64_t kPackAlign = 4096;
inline constexpr uint64_t kPackHeaderBytes = 4096;
// The most of a description read_packed reads (the rest is not read, so a larger one fails
// its checksum): far above a real model's (28 layers of Qwen2.5-1.5B: 30 KiB), bounded so a
// hostile header cannot make it allocate gigabytes.
inline constexpr uint64_t kPackMaxDescriptionBytes = uint64_t{64} << 20;

struct PackedTensor {
  int layer = 0, matmul = 0;
  uint64_t offset = 0, bytes = 0;              // packed weights
  uint64_t scale_offset = 0, scale_bytes = 0;  // fp32 per-column scales; 0 = none
  // int4: the K-slice width of the tensor's native layout (matmul::PlanOptions::slice_k),
  // which every plan of it takes; 0 = the dtype's (480; every version 2 file). 0 for other dtypes.
  int64_t slice_k = 0;
};

struct PackedModel {
  ModelDesc desc;
  std::vector<PackedTensor> tensors;  // layer-major, matmuls in the description's order
  uint64_t file_bytes = 0;
  uint64_t data_offset = 0;

  const PackedTensor& tensor(int layer, int matmul) const {
    return tensors[static_cast<size_t>(layer) * desc.matmuls.size() + static_cast<size_t>(matmul)];
  }
  uint64_t weight_bytes() const;   // sum of the tensors' packed bytes
  uint64_t largest_layer_bytes() const;
};

// Bytes of K x N weights of `dtype` in the native layout of int4 width `slice_k` (all
// K-slices, padding included; 0 = the dtype's width).
Result<uint64_t> packed_bytes(matmul::DType dtype, int64_t k, int64_t n, int64_t slice_k = 0);
// The most those bytes can be: the same for int8 and fp16; for int4 the largest over every
// width a file may hold, as the width is found from the weights when they are packed.
Result<uint64_t> packed_bytes_at_most(matmul::DType dtype, int64_t k, int64_t n);
// The native layout of K x N weights of `dtype` in K-slices of `slice_k` (int4; 0 = the
// dtype's): the one-core plan whose slices the packed bytes follow.
Result<matmul::Plan> layout_plan(matmul::DType dtype, int64_t k, int64_t n, int64_t slice_k = 0);
inline uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

// The size in bytes of the file PackWriter writes for `desc` (header, the description's
// reserved space, every tensor and its scales on their 4 KiB boundaries), computed before
// anything is written so that the free space can be checked against it: exact for int8 and
// fp16, at most for int4 (packed_bytes_at_most: the widths are the weights').
// `scaled(layer, matmul)` says which tensors carry fp32 scales (none when empty).
Result<uint64_t> packed_file_bytes(const ModelDesc& desc, const std::function<bool(int, int)>& scaled = {});

// Writes a packed file: add tensors in order (layer-major), then finish(). The file is an
// OutputFile (driver/common/safe_file.h): written beside the output and renamed over it by
// finish(); a writer destroyed before, or a failed finish(), leaves the output as it was.
class PackWriter {
 public:
  static Result<PackWriter> create(const std::string& path, const ModelDesc& desc);
  PackWriter(PackWriter&& o) noexcept;
  PackWriter& operator=(PackWriter&&) = delete;
  ~PackWriter();
  // `row_major`: K x N weights in the dtype's host format (int8_t, binary16, or int4 nibbles).
  // int4 weights are laid out in K-slices as wide as their own bound allows
  // (matmul::int4_safe_slice_k), or `slice_k` wide when it is given: a width the bound does
  // not allow makes a file the reader's check refuses (tests write such files with it).
  Status add(int layer, int matmul, const void* row_major, std::span<const float> scales = {}, int64_t slice_k = 0);
  Status finish();

 private:
  PackWriter() = default;
  Status write_at(uint64_t offset, const void* data, size_t bytes);
  std::optional<OutputFile> out_;
  std::string path_;
  PackedModel model_;
  uint64_t json_reserve_ = 0;
  uint64_t cursor_ = 0;
  std::vector<uint8_t> packed_;  // add()'s native layout, kept between tensors
};

// Opens and checks a packed file's header and tensor table (not the tensor bytes).
Result<PackedModel> read_packed(const std::string& path);
// Parses a header + description already in memory (`file_bytes` = the file's real size).
Result<PackedModel> parse_packed(std::span<const uint8_t> head, uint64_t file_bytes);

}  // namespace ork::exec
