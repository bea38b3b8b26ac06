// The dtype checks of ork_weights_create / ork_matmul (weights.h), read from the dtype table
// (lib/matmul/dtype.h): which weights dtypes exist, which A and C each takes (docs/dtypes.md).
// What each backend does per dtype: backend_npu.cpp, backend_cpu.cpp.
#include <fmt/format.h>

#include <string>

#include "lib/api/error.h"
#include "lib/api/weights.h"
#include "lib/matmul/dtype.h"
#include "lib/matmul/layout.h"

namespace ork::api {

// The dtype table's numbers are the C API's (lib/matmul/dtype.h cannot include ork.h).
static_assert(matmul::kCodeInt8 == ORK_DTYPE_INT8 && matmul::kCodeFp16 == ORK_DTYPE_FP16 &&
              matmul::kCodeInt4 == ORK_DTYPE_INT4 && matmul::kCodeInt32 == ORK_DTYPE_INT32 &&
              matmul::kCodeFp32 == ORK_DTYPE_FP32);

const matmul::DTypeInfo& dtype_row(ork_dtype dtype) { return *matmul::weights_dtype(enum_value(dtype)); }
matmul::DType internal_dtype(ork_dtype dtype) { return dtype_row(dtype).dtype; }

ork_status call_dtypes(const ork_weights& w, const ork_matmul_options& o, CallTypes* t) {
  if (auto s = matmul::check_call_codes(dtype_row(w.dtype), o.a_dtype, o.c_dtype, &t->a, &t->c); !s)
    return fail(ORK_E_INVALID_ARGUMENT, s.error().message);
  return ORK_OK;
}

ork_status check_weights_dtype(int dtype) {
  if (matmul::weights_dtype(dtype) != nullptr) return ORK_OK;
  if (matmul::element_type(dtype) != nullptr)
    return fail(ORK_E_INVALID_ARGUMENT,
                fmt::format("ork_weights_create: dtype {} is an output dtype; weights are int8, fp16 or int4",
                            matmul::code_text(dtype)));
  return fail(ORK_E_INVALID_ARGUMENT, fmt::format("ork_weights_create: dtype {} is not a dtype (int8 1, fp16 2, int4 3)",
                                                  dtype));
}

}  // namespace ork::api
