// Host pack / unpack for fp16 and int4 (layout.h). B: plain loops over the index functions of
// docs/regcmd-contract.md (section 2), once per weight upload. A and C, once per call: the
// 16-byte atom loops of layout_host.h, shared with int8. Checked element by element against
// the index functions in tests/lib/matmul/layout_dtypes_test.cpp and layout_host_test.cpp.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "driver/common/int4.h"
#include "lib/matmul/layout.h"
#include "lib/matmul/layout_host.h"
#include "lib/ref/workers.h"

namespace ork::matmul {
namespace {

Status check_dtype(const Plan& plan, DType want, const char* fn) {
  if (plan.dtype == want) return {};
  return make_error(-EINVAL, std::string(fn) + ": plan dtype " + dtype_name(plan.dtype) + ", expected " +
                                 dtype_name(want));
}

// K range [k0, k0 + kt) of slice s.
int64_t slice_kt(const Plan& p, int64_t s) { return std::min(p.slice_k, p.kp - s * p.slice_k); }

// Element offset of slice s's weights: every earlier slice is slice_k deep.
int64_t slice_base(const Plan& p, int64_t s) { return p.np * p.slice_k * s; }

}  // namespace

Status pack_a_fp16(std::span<const uint16_t> a, const Plan& plan, std::span<uint16_t> out, RowRange rows) {
  if (auto s = check_dtype(plan, DType::fp16, "pack_a_fp16"); !s) return s;
  const int64_t m_rows = plan.shape.m, k_len = plan.shape.k;
  if (auto s = check_size("A", static_cast<int64_t>(a.size()), m_rows * k_len); !s) return s;
  if (auto s = check_size("native A", static_cast<int64_t>(out.size()), plan.mp * plan.kp); !s) return s;
  int64_t first = 0, last = 0;
  clamp_rows(rows, m_rows, &first, &last);
  // An fp16 atom is 8 elements = 16 bytes: the byte rows of int8's packer, 2K bytes long.
  pack_atom_rows(reinterpret_cast<const uint8_t*>(a.data()), 2 * k_len, plan.mp, 2 * plan.kp,
                 reinterpret_cast<uint8_t*>(out.data()), first, last);
  return {};
}

Status pack_b_fp16(std::span<const uint16_t> b, const Plan& plan, std::span<uint16_t> out) {
  if (auto s = check_dtype(plan, DType::fp16, "pack_b_fp16"); !s) return s;
  const int64_t k_len = plan.shape.k, n_len = plan.shape.n;
  if (auto s = check_size("B", static_cast<int64_t>(b.size()), k_len * n_len); !s) return s;
  if (auto s = check_size("native B", static_cast<int64_t>(out.size()), plan.np * plan.kp); !s) return s;
  std::fill(out.begin(), out.end(), uint16_t{0});
  for (int64_t s = 0; s < plan.slices; ++s) {
    const int64_t k0 = s * plan.slice_k, kt = slice_kt(plan, s), base = slice_base(plan, s);
    for (int64_t k = k0; k < std::min(k0 + kt, k_len); ++k)
      for (int64_t n = 0; n < n_len; ++n) out[base + weight_index(DType::fp16, k - k0, n, kt)] = b[k * n_len + n];
  }
  return {};
}

Status pack_a_int4(std::span<const uint8_t> a, const Plan& plan, std::span<uint8_t> out, RowRange rows) {
  if (auto s = check_dtype(plan, DType::int4, "pack_a_int4"); !s) return s;
  const int64_t m_rows = plan.shape.m, k_len = plan.shape.k;
  if (auto s = check_size("A (packed int4 bytes)", static_cast<int64_t>(a.size()), int4_packed_bytes(m_rows * k_len)); !s)
    return s;
  if (auto s = check_size("native A", static_cast<int64_t>(out.size()), plan.a_bytes()); !s) return s;
  int64_t first = 0, last = 0;
  clamp_rows(rows, m_rows, &first, &last);
  pack_int4_rows(a.data(), k_len, plan.mp, plan.kp, out.data(), first, last);  // 32 nibbles = 16 bytes per atom
  return {};
}

Status pack_b_int4(std::span<const uint8_t> b, const Plan& plan, std::span<uint8_t> out) {
  if (auto s = check_dtype(plan, DType::int4, "pack_b_int4"); !s) return s;
  const int64_t k_len = plan.shape.k, n_len = plan.shape.n;
  if (auto s = check_size("B (packed int4 bytes)", static_cast<int64_t>(b.size()), int4_packed_bytes(k_len * n_len)); !s)
    return s;
  if (auto s = check_size("native B", static_cast<int64_t>(out.size()), plan.b_bytes()); !s) return s;
  std::fill(out.begin(), out.end(), uint8_t{0});
  for (int64_t s = 0; s < plan.slices; ++s) {
    const int64_t k0 = s * plan.slice_k, kt = slice_kt(plan, s), base = slice_base(plan, s);
    for (int64_t k = k0; k < std::min(k0 + kt, k_len); ++k)
      for (int64_t n = 0; n < n_len; ++n)
        int4::put(out.data(), base + weight_index(DType::int4, k - k0, n, kt), int4::value_at(b.data(), k * n_len + n));
  }
  return {};
}

// Packed bytes from which widening splits over two threads: 1 MiB in, 2 MiB out, the pack
// threshold of layout_host.cpp (2 MiB moved).
constexpr int64_t kWidenThreadBytes = int64_t{1} << 20;

Status widen_int4(std::span<const uint8_t> packed, int64_t count, std::span<int8_t> out) {
  if (auto s = check_size("packed int4 bytes", static_cast<int64_t>(packed.size()), int4_packed_bytes(count)); !s)
    return s;
  if (auto s = check_size("widened int8", static_cast<int64_t>(out.size()), count); !s) return s;
  // Byte by byte (two elements each, int4.h's order): a loop the compiler vectorises, where
  // value_at's per-element branch on i % 2 kept it scalar. Big counts (w4a4's A on the cpu
  // device, weights at import) on two threads, whole bytes each.
  const uint8_t* src = packed.data();
  int8_t* dst = out.data();
  const auto widen = [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      dst[2 * b] = int4::low_value(src[b]);
      dst[2 * b + 1] = int4::high_value(src[b]);
    }
  };
  const int64_t whole = count / 2;
  if (whole < kWidenThreadBytes) {
    widen(0, whole);
  } else {
    ref::detail::run_on_threads(2, [&](int i) { widen(i == 0 ? 0 : whole / 2, i == 0 ? whole / 2 : whole); });
  }
  if (count % 2 != 0) dst[count - 1] = int4::low_value(src[whole]);  // the last element, a low nibble
  return {};
}

namespace {

// Row-major C from one slice's (np/c2, mp, c2) native output (layout_host.h's one-pass loop).
template <class Native, class Out>
Status unpack_one(std::span<const Native> native, const Plan& plan, std::span<Out> c, bool first, RowRange rows) {
  const int64_t m_rows = plan.shape.m, n_len = plan.shape.n;
  if (auto s = check_size("native C", static_cast<int64_t>(native.size()), c_elements_per_slice(plan)); !s) return s;
  if (auto s = check_size("C", static_cast<int64_t>(c.size()), m_rows * n_len); !s) return s;
  int64_t r0 = 0, r1 = 0;
  clamp_rows(rows, m_rows, &r0, &r1);
  const Native* slice = native.data();
  unpack_rows(&slice, 1, plan, c.data(), first, r0, r1);
  return {};
}

}  // namespace

Status unpack_c_int16(std::span<const int16_t> native, const Plan& plan, std::span<int32_t> c, bool first,
                      RowRange rows) {
  if (auto s = check_dtype(plan, DType::int4, "unpack_c_int16"); !s) return s;
  return unpack_one(native, plan, c, first, rows);
}

Status unpack_c_fp32(std::span<const float> native, const Plan& plan, std::span<float> c, bool first, RowRange rows) {
  if (auto s = check_dtype(plan, DType::fp16, "unpack_c_fp32"); !s) return s;
  if (plan.npu_fp16_out()) return make_error(-EINVAL, "unpack_c_fp32: this plan's NPU output is fp16");
  return unpack_one(native, plan, c, first, rows);
}

Status unpack_c_fp16(std::span<const uint16_t> native, const Plan& plan, std::span<uint16_t> c, RowRange rows) {
  if (auto s = check_dtype(plan, DType::fp16, "unpack_c_fp16"); !s) return s;
  if (!plan.npu_fp16_out()) return make_error(-EINVAL, "unpack_c_fp16: this plan's NPU output is fp32");
  return unpack_one(native, plan, c, true, rows);
}

}  // namespace ork::matmul
