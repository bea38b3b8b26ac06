// ork_tensor checked against a call (resolve_tensor), and the staging of strided operands
// for the runner, which takes dense row-major A and C. Everyone who takes an ork_tensor
// (the sync call, async jobs, batches) goes through resolve_tensor.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "lib/api/buffer.h"
#include "ork/ork.h"

namespace ork::api {

// Largest dimension (M, K, N) accepted anywhere: keeps every byte count far from int64
// overflow.
inline constexpr int64_t kMaxDim = int64_t{1} << 24;

// What a call needs of one operand.
struct Operand {
  const char* call = "";  // the entry point, for messages: "ork_matmul_t"
  const char* name = "";  // "A", "C"
  int64_t rows = 0, cols = 0;
  int32_t dtype = 0;      // ORK_DTYPE_*: int4 counts nibbles
};

// A tensor after resolve_tensor: where element (0, 0) is, and how far apart rows are.
struct TensorRef {
  uint8_t* base = nullptr;    // byte holding element (0, 0) (its low nibble for int4)
  int64_t row_stride = 0;     // elements between row starts, >= cols
  bool dense = true;          // rows back to back (or one row): the runner takes base as is
  size_t span_bytes = 0;      // bytes from base to past the last element
  ork_buffer* buffer = nullptr;  // null for host memory
};

// Bits of one element of an ORK_DTYPE_* (0 for an unknown dtype).
int element_bits(int32_t dtype);

// Checks `t` for `op` on `device`: exactly one of host / buffer; a buffer of this device;
// row_stride 0 or >= cols; the element pointer aligned to the element size; every element
// inside the buffer (the message names the operand, the bytes needed and the bytes given).
ork_status resolve_tensor(const ork_device& device, const ork_tensor* t, const Operand& op, TensorRef* out);

// A dense host operand at `p` (ork_matmul's A and C): aligned to its element as resolve_tensor
// requires of a host tensor at offset 0 (the same message).
ork_status check_host_aligned(const Operand& op, const void* p);

// The operand's elements as a dense row-major matrix: `r.base` when dense, else gathered
// into `scratch`.
const void* dense_input(const TensorRef& r, const Operand& op, std::vector<uint8_t>& scratch);
// Where the runner writes a dense C: `r.base` when dense, else `scratch` (sized here); then
// scatter_output copies scratch into the strided rows (a no-op when dense).
void* output_target(const TensorRef& r, const Operand& op, std::vector<uint8_t>& scratch);
void scatter_output(const TensorRef& r, const Operand& op, const std::vector<uint8_t>& scratch);

}  // namespace ork::api
