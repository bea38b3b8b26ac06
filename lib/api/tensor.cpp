// resolve_tensor and the staging of strided operands (tensor.h).
#include "lib/api/tensor.h"

#include <cstring>
#include <string>

#include <fmt/format.h>

#include "driver/common/int4.h"
#include "lib/api/error.h"
#include "lib/matmul/dtype.h"

namespace ork::api {
namespace {

// Bytes of `elements` elements of `bits` each (int4: two per byte, a last half byte whole).
size_t bytes_of(int64_t elements, int bits) {
  return static_cast<size_t>((elements * bits + 7) / 8);
}


// Copies rows between a strided and a dense matrix of nibbles (int4).
void copy_nibble_rows(const uint8_t* src, int64_t src_stride, uint8_t* dst, int64_t dst_stride, int64_t rows,
                      int64_t cols) {
  for (int64_t m = 0; m < rows; ++m)
    for (int64_t k = 0; k < cols; ++k) int4::put(dst, m * dst_stride + k, int4::code_at(src, m * src_stride + k));
}

// The element pointer `base` (offset_bytes into its memory) aligned to the element size.
ork_status check_aligned(const Operand& op, const uint8_t* base, size_t offset_bytes, int bits) {
  const size_t align = bits >= 8 ? static_cast<size_t>(bits / 8) : 1;
  if (reinterpret_cast<uintptr_t>(base) % align != 0)
    return fail(ORK_E_INVALID_ARGUMENT,
                fmt::format("{}: {} at offset_bytes {}: the element pointer is not aligned to the {}-byte element",
                            op.call, op.name, offset_bytes, align));
  return ORK_OK;
}

}  // namespace

ork_status check_host_aligned(const Operand& op, const void* p) {
  return check_aligned(op, static_cast<const uint8_t*>(p), 0, element_bits(op.dtype));
}

int element_bits(int32_t dtype) {
  const matmul::ElementType* e = matmul::element_type(dtype);  // the dtype table
  return e ? e->bits : 0;
}

ork_status resolve_tensor(const ork_device& device, const ork_tensor* t, const Operand& op, TensorRef* out) {
  *out = TensorRef{};
  if (t == nullptr) return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}: {} is NULL", op.call, op.name));
  if ((t->host == nullptr) == (t->buffer == nullptr))
    return fail(ORK_E_INVALID_ARGUMENT,
                fmt::format("{}: {} sets {}: exactly one of host and buffer must be set", op.call, op.name,
                            t->host ? "both host and buffer" : "neither host nor buffer"));
  const int bits = element_bits(op.dtype);
  if (bits == 0) return fail(ORK_E_INVALID_ARGUMENT, fmt::format("{}: {} has unknown dtype {}", op.call, op.name, op.dtype));
  if (t->row_stride < 0 || (t->row_stride != 0 && t->row_stride < op.cols))
    return fail(ORK_E_INVALID_ARGUMENT,
                fmt::format("{}: {}.row_stride = {}: must be 0 (dense) or >= the {} columns of {}", op.call, op.name,
                            t->row_stride, op.cols, op.name));
  // Rows are <= kMaxDim = 2^24; a stride past 2^32 elements cannot lie in any buffer
  // (4 GiB), and with it the span below stays under 2^56 elements, 2^61 bits.
  constexpr int64_t kMaxStride = int64_t{1} << 32;
  if (t->row_stride > kMaxStride)
    return fail(ORK_E_INVALID_ARGUMENT,
                fmt::format("{}: {}.row_stride = {}: larger than {} is not supported", op.call, op.name, t->row_stride,
                            kMaxStride));
  const int64_t stride = t->row_stride == 0 ? op.cols : t->row_stride;
  const size_t span = bytes_of((op.rows - 1) * stride + op.cols, bits);
  if (t->buffer != nullptr) {
    const ork_buffer& b = *t->buffer;
    if (b.device != &device)
      return fail(ORK_E_INVALID_ARGUMENT,
                  fmt::format("{}: {}: the buffer belongs to another device (import it as a dma-buf to share it)",
                              op.call, op.name));
    if (t->offset_bytes > b.bytes || span > b.bytes - t->offset_bytes)
      return fail(ORK_E_INVALID_ARGUMENT,
                  fmt::format("{}: {} ({} x {}, row_stride {}, offset_bytes {}) needs {} bytes of its buffer, the "
                              "buffer has {}",
                              op.call, op.name, op.rows, op.cols, stride, t->offset_bytes,
                              t->offset_bytes > SIZE_MAX - span ? SIZE_MAX : t->offset_bytes + span, b.bytes));
    out->base = b.data() + t->offset_bytes;
    out->buffer = t->buffer;
  } else {
    out->base = static_cast<uint8_t*>(t->host) + t->offset_bytes;
  }
  if (auto s = check_aligned(op, out->base, t->offset_bytes, bits); s != ORK_OK) return s;
  out->row_stride = stride;
  out->dense = stride == op.cols || op.rows == 1;
  out->span_bytes = span;
  return ORK_OK;
}

const void* dense_input(const TensorRef& r, const Operand& op, std::vector<uint8_t>& scratch) {
  if (r.dense) return r.base;
  const int bits = element_bits(op.dtype);
  scratch.assign(bytes_of(op.rows * op.cols, bits), 0);
  if (bits == 4) {
    copy_nibble_rows(r.base, r.row_stride, scratch.data(), op.cols, op.rows, op.cols);
  } else {
    const size_t e = static_cast<size_t>(bits / 8), row = static_cast<size_t>(op.cols) * e;
    for (int64_t m = 0; m < op.rows; ++m)
      std::memcpy(scratch.data() + static_cast<size_t>(m) * row, r.base + static_cast<size_t>(m * r.row_stride) * e, row);
  }
  return scratch.data();
}

void* output_target(const TensorRef& r, const Operand& op, std::vector<uint8_t>& scratch) {
  if (r.dense) return r.base;
  scratch.assign(bytes_of(op.rows * op.cols, element_bits(op.dtype)), 0);
  return scratch.data();
}

void scatter_output(const TensorRef& r, const Operand& op, const std::vector<uint8_t>& scratch) {
  if (r.dense) return;
  const int bits = element_bits(op.dtype);
  if (bits == 4) {  // no int4 output today; kept whole for the day there is one
    copy_nibble_rows(scratch.data(), op.cols, r.base, r.row_stride, op.rows, op.cols);
    return;
  }
  const size_t e = static_cast<size_t>(bits / 8), row = static_cast<size_t>(op.cols) * e;
  for (int64_t m = 0; m < op.rows; ++m)
    std::memcpy(r.base + static_cast<size_t>(m * r.row_stride) * e, scratch.data() + static_cast<size_t>(m) * row, row);
}

}  // namespace ork::api
