#include "lib/io/read_plan.h"

#include <algorithm>

#include <fmt/format.h>

namespace ork::io {

Result<ReadPlan> plan_read(Extent layer, uint32_t align_bytes, uint64_t chunk_bytes) {
  if (!is_pow2(align_bytes)) {
    return make_error(-EINVAL, fmt::format("alignment {} bytes: must be a power of two",
                                           align_bytes));
  }
  if (!is_pow2(chunk_bytes) || chunk_bytes < align_bytes) {
    return make_error(-EINVAL, fmt::format("chunk size {} bytes: must be a power of two and "
                                           ">= the alignment ({} bytes)",
                                           chunk_bytes, align_bytes));
  }
  if (layer.length == 0) return make_error(-EINVAL, "layer of 0 bytes: nothing to read");
  if (layer.end() < layer.offset) {
    return make_error(-EOVERFLOW, fmt::format("layer at {} + {} bytes overflows 64 bits",
                                              layer.offset, layer.length));
  }
  const uint64_t mask = uint64_t{align_bytes} - 1;
  ReadPlan plan;
  plan.file_begin = layer.offset & ~mask;
  plan.file_end = (layer.end() + mask) & ~mask;
  plan.need_end = layer.end();
  plan.head_bytes = layer.offset - plan.file_begin;
  plan.layer_bytes = layer.length;
  plan.chunk_bytes = chunk_bytes;
  plan.align_bytes = align_bytes;
  return plan;
}

size_t ReadPlan::chunk_count() const {
  return static_cast<size_t>((slot_bytes() + chunk_bytes - 1) / chunk_bytes);
}

Chunk ReadPlan::chunk(size_t index) const {
  Chunk c;
  c.slot_offset = uint64_t{index} * chunk_bytes;
  c.file_offset = file_begin + c.slot_offset;
  c.length = std::min(chunk_bytes, file_end - c.file_offset);
  const uint64_t need_stop = std::min(c.file_offset + c.length, need_end);
  c.need = need_stop > c.file_offset ? need_stop - c.file_offset : 0;
  return c;
}

}  // namespace ork::io
