// How one layer's file range becomes chunk reads into a slot. Pure arithmetic, no I/O.
//
// Under O_DIRECT the buffer address, file offset and length must all be multiples of the
// file's alignment (statx STATX_DIOALIGN; docs/io.md "Facts and sources"). So a layer
// [offset, offset+length) is read as the aligned range [floor(offset), ceil(end)) into the
// slot, and the layer's bytes start `head_bytes` into the slot. With buffered I/O the
// alignment is 1 and the aligned range is the layer itself.
#pragma once

#include <cstddef>
#include <cstdint>

#include "driver/common/result.h"

namespace ork::io {

// A byte range of a file.
struct Extent {
  uint64_t offset = 0;
  uint64_t length = 0;
  uint64_t end() const { return offset + length; }
};

// One read: `length` bytes at `file_offset` into slot + `slot_offset`. The first `need`
// bytes must arrive; the rest lies past the end of the file (rounding the tail up to the
// alignment) and may come back short.
struct Chunk {
  uint64_t file_offset = 0;
  uint64_t slot_offset = 0;
  uint64_t length = 0;
  uint64_t need = 0;
};

struct ReadPlan {
  uint64_t file_begin = 0;  // aligned start of the range read
  uint64_t file_end = 0;    // aligned end (may pass EOF)
  uint64_t need_end = 0;    // end of the layer's bytes
  uint64_t head_bytes = 0;  // where the layer starts in the slot
  uint64_t layer_bytes = 0;
  uint64_t chunk_bytes = 0;
  uint32_t align_bytes = 1;

  uint64_t slot_bytes() const { return file_end - file_begin; }
  size_t chunk_count() const;
  Chunk chunk(size_t index) const;
};

// align_bytes: a power of two (1 = buffered). chunk_bytes: a power of two and a multiple of
// align_bytes, so chunk boundaries stay aligned.
Result<ReadPlan> plan_read(Extent layer, uint32_t align_bytes, uint64_t chunk_bytes);

inline bool is_pow2(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }


}  // namespace ork::io
