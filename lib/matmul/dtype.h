// The one dtype table (docs/dtypes.md "The dtype table"): every element type the library
// names, and for each weights dtype everything that differs between dtypes: its C API
// number, name, bits, the A and C dtypes it takes, the register precision, the K-slice
// widths, its pack and unpack kernels and its CPU reference kernel. Everyone else reads the
// table; a new dtype is a row here, its kernels, the emulator and the tests.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>

#include "driver/common/result.h"

namespace ork::matmul {

enum class DType { int8, fp16, int4 };

struct Plan;
struct HostWeights;  // cpu_matmul.h

// The C API's element type numbers (include/ork/ork.h `ork_dtype`). lib/matmul sits below the
// C API and cannot include it; lib/api/matmul_dtypes.cpp checks at compile time that each
// number here is its ORK_DTYPE_*.
inline constexpr int32_t kCodeInt8 = 1, kCodeFp16 = 2, kCodeInt4 = 3, kCodeInt32 = 4, kCodeFp32 = 5;

// An element type of an operand: weights, A or C.
struct ElementType {
  int32_t code = 0;
  const char* name = "";
  int bits = 0;  // per element (int4: 4, two per byte)
};
// The element type a C API number names; nullptr for any other number.
const ElementType* element_type(int32_t code);
// "int8 (1)"; "unknown (99)": how messages name a number a caller passed.
std::string code_text(int32_t code);

// One call of a dtype's CPU reference kernel: dense row-major A (M x K) and C (M x N).
struct CpuCall {
  const void* a = nullptr;
  int64_t m = 0;
  void* c = nullptr;
  int32_t a_code = 0, c_code = 0;  // after defaults, accepted by the row (check_call_codes)
  int threads = 0;                 // host threads (0: as many as the shape needs)
  int* threads_used = nullptr;     // receives the threads the multiply ran on
};

// One weights dtype: everything about it in one row.
struct DTypeInfo {
  DType dtype;
  int32_t code;                     // its C API number
  const char* name;
  int bits;                         // per element of W and of A of the same dtype
  std::array<int32_t, 2> a_codes;   // A dtypes it takes: its own first; int4 also int8 (w4a8). 0 = none
  std::array<int32_t, 2> c_codes;   // C dtypes it takes, the default first. 0 = none
  const char* a_note;               // how an error names the second A: " (W4A4) or int8 (w4a8)"
  uint32_t precision;               // CNA/CORE PROC_PRECISION (driver/regs/matmul_fixed.h)
  int64_t slice_k;                  // K per slice when K does not fit one task (plan.h)
  int64_t full_k;                   // the widest K one task takes unsliced (plan.h)
  // K-slices as few as slice_k allows, evened out (int8; plan.h slice_width); else slice_k
  // wide with a narrower last one.
  bool evened_slices;
  // Dense K x N weights (the C API's layout) -> the plan's native B (layout.h).
  Status (*pack_b)(const Plan& plan, const void* w, std::span<uint8_t> out);
  // Rows [first, last) of row-major A -> the native feature buffer (layout_host.h).
  void (*pack_a_rows)(const Plan& plan, const uint8_t* a, uint8_t* out, int64_t first, int64_t last);
  // A slice group's NPU outputs -> C, copied when `copy` else added (layout_host.h).
  Status (*unpack_c)(const Plan& plan, std::span<const uint8_t* const> slices, bool copy, void* c,
                     std::span<float> acc);
  // Dense K x N weights -> the CPU reference's kept form; C = A x W on it (cpu_matmul.h).
  Result<HostWeights> (*host_weights)(int64_t k, int64_t n, const void* w);
  Status (*cpu)(const HostWeights& w, const CpuCall& call);
};

// The row of a dtype, and its name.
const DTypeInfo& dtype_info(DType dtype);
const char* dtype_name(DType dtype);
// The row whose C API number is `code`; nullptr when `code` is no weights dtype.
const DTypeInfo* weights_dtype(int32_t code);
// The row named `name` ("int8", "fp16", "int4"); nullptr for any other name.
const DTypeInfo* dtype_by_name(const std::string& name);
// Every weights dtype, in the order of DType.
std::span<const DTypeInfo> weights_dtypes();

// Whether the row takes an A / a C of C API number `code`.
bool takes_a(const DTypeInfo& w, int32_t code);
bool takes_c(const DTypeInfo& w, int32_t code);

// The A and C of one call after defaults (0: the weights' own A, the row's default C);
// -EINVAL naming both dtypes when the row does not take them.
Status check_call_codes(const DTypeInfo& w, int32_t a_code, int32_t c_code, int32_t* a_out, int32_t* c_out);

}  // namespace ork::matmul
