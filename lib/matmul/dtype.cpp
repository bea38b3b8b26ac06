// The dtype table (dtype.h). Sources of each fact: the precision codes
// driver/regs/matmul_fixed.h (docs/regcmd-contract.md section 2), the slice widths plan.h
// (docs/matmul-schedule.md), the accepted A and C dtypes docs/dtypes.md "C API".
#include "lib/matmul/dtype.h"

#include <cerrno>

#include <fmt/format.h>

#include "driver/regs/matmul_fixed.h"
#include "lib/matmul/cpu_matmul.h"
#include "lib/matmul/layout.h"
#include "lib/matmul/layout_host.h"
#include "lib/matmul/plan.h"

namespace ork::matmul {
namespace {

size_t dtype_sz(int64_t v) { return static_cast<size_t>(v); }

// The rows' pack_b: dense K x N in the C API's layout -> native B (layout.h).
Status pack_b_int8_dense(const Plan& p, const void* w, std::span<uint8_t> out) {
  return pack_b_int8({static_cast<const int8_t*>(w), dtype_sz(p.shape.k * p.shape.n)}, p,
                     {reinterpret_cast<int8_t*>(out.data()), out.size()});
}
Status pack_b_fp16_dense(const Plan& p, const void* w, std::span<uint8_t> out) {
  return pack_b_fp16({static_cast<const uint16_t*>(w), dtype_sz(p.shape.k * p.shape.n)}, p,
                     {reinterpret_cast<uint16_t*>(out.data()), out.size() / 2});
}
Status pack_b_int4_dense(const Plan& p, const void* w, std::span<uint8_t> out) {
  return pack_b_int4({static_cast<const uint8_t*>(w), dtype_sz(int4_packed_bytes(p.shape.k * p.shape.n))}, p, out);
}

constexpr ElementType kElements[] = {
    {kCodeInt8, "int8", 8}, {kCodeFp16, "fp16", 16}, {kCodeInt4, "int4", 4},
    {kCodeInt32, "int32", 32}, {kCodeFp32, "fp32", 32},
};

namespace R = ork::regs;

// In the order of DType (dtype_info indexes it).
const DTypeInfo kDTypes[] = {
    {.dtype = DType::int8, .code = kCodeInt8, .name = "int8", .bits = 8,
     .a_codes = {kCodeInt8, 0}, .c_codes = {kCodeInt32, 0}, .a_note = "",
     .precision = R::kPrecisionInt8, .slice_k = kInt8MaxSliceK, .full_k = kMaxFullK, .evened_slices = true,
     .pack_b = pack_b_int8_dense, .pack_a_rows = pack_a_rows_bytes, .unpack_c = unpack_c_int8_group,
     .host_weights = host_weights_int8, .cpu = cpu_matmul_int8},
    {.dtype = DType::fp16, .code = kCodeFp16, .name = "fp16", .bits = 16,
     .a_codes = {kCodeFp16, 0}, .c_codes = {kCodeFp32, kCodeFp16}, .a_note = "",
     .precision = R::kPrecisionFp16, .slice_k = kSliceK, .full_k = kMaxFullK, .evened_slices = false,
     .pack_b = pack_b_fp16_dense, .pack_a_rows = pack_a_rows_bytes, .unpack_c = unpack_c_fp16_group,
     .host_weights = host_weights_fp16, .cpu = cpu_matmul_fp16},
    // int4: K-slices of 480 keep int16 partials from saturating (plan.h kInt4SliceK).
    {.dtype = DType::int4, .code = kCodeInt4, .name = "int4", .bits = 4,
     .a_codes = {kCodeInt4, kCodeInt8}, .c_codes = {kCodeInt32, 0}, .a_note = " (W4A4) or int8 (w4a8)",
     .precision = R::kPrecisionInt4, .slice_k = kInt4SliceK, .full_k = kInt4SliceK, .evened_slices = false,
     .pack_b = pack_b_int4_dense, .pack_a_rows = pack_a_rows_int4, .unpack_c = unpack_c_int4_group,
     .host_weights = host_weights_int4, .cpu = cpu_matmul_int4},
};
static_assert(static_cast<size_t>(DType::int8) == 0 && static_cast<size_t>(DType::fp16) == 1 &&
              static_cast<size_t>(DType::int4) == 2, "kDTypes is indexed by DType");

// "fp32 or fp16": the accepted dtypes as an error names them.
std::string names(const std::array<int32_t, 2>& codes) {
  std::string s = element_type(codes[0])->name;
  if (codes[1] != 0) s += std::string(" or ") + element_type(codes[1])->name;
  return s;
}

}  // namespace

namespace {
bool takes(const std::array<int32_t, 2>& codes, int32_t code) {
  return code != 0 && (codes[0] == code || codes[1] == code);
}
}  // namespace

bool takes_a(const DTypeInfo& w, int32_t code) { return takes(w.a_codes, code); }
bool takes_c(const DTypeInfo& w, int32_t code) { return takes(w.c_codes, code); }

const ElementType* element_type(int32_t code) {
  for (const ElementType& e : kElements)
    if (e.code == code) return &e;
  return nullptr;
}

std::string code_text(int32_t code) {
  const ElementType* e = element_type(code);
  return fmt::format("{} ({})", e ? e->name : "unknown", code);
}

const DTypeInfo& dtype_info(DType dtype) { return kDTypes[static_cast<size_t>(dtype)]; }
const char* dtype_name(DType dtype) { return dtype_info(dtype).name; }
std::span<const DTypeInfo> weights_dtypes() { return kDTypes; }

const DTypeInfo* weights_dtype(int32_t code) {
  for (const DTypeInfo& d : kDTypes)
    if (d.code == code) return &d;
  return nullptr;
}

const DTypeInfo* dtype_by_name(const std::string& name) {
  for (const DTypeInfo& d : kDTypes)
    if (name == d.name) return &d;
  return nullptr;
}

Status check_call_codes(const DTypeInfo& w, int32_t a_code, int32_t c_code, int32_t* a_out, int32_t* c_out) {
  *a_out = a_code == 0 ? w.code : a_code;
  *c_out = c_code == 0 ? w.c_codes[0] : c_code;
  if (!takes(w.a_codes, *a_out))
    return make_error(-EINVAL, fmt::format("ork_matmul: a_dtype {} with {} weights: expected {}{}", code_text(*a_out),
                                           w.name, w.name, w.a_note));
  if (!takes(w.c_codes, *c_out))
    return make_error(-EINVAL, fmt::format("ork_matmul: c_dtype {} with {} weights: expected {}", code_text(*c_out),
                                           w.name, names(w.c_codes)));
  return {};
}

}  // namespace ork::matmul
