// The reference chain (reference.h).
#include "lib/exec/chain_reference.h"

#include <cstdio>
#include <cstring>

#include <fmt/format.h>

#include "lib/exec/synthetic.h"
#include "lib/exec/unpack.h"
#include "lib/ref/fast.h"
#include "lib/ref/fp16_matmul.h"
#include "lib/ref/int4.h"
#include "lib/ref/oracle.h"

namespace ork::exec {
namespace {

Status read_exact(std::FILE* f, uint64_t offset, std::vector<uint8_t>& out, uint64_t bytes, const std::string& path) {
  out.resize(bytes);
  if (std::fseek(f, static_cast<long>(offset), SEEK_SET) != 0 || std::fread(out.data(), 1, bytes, f) != bytes)
    return make_error(-EIO, fmt::format("{}: short read of {} bytes at {}", path, bytes, offset));
  return {};
}

}  // namespace

Status reference_matmul(matmul::DType dtype, const Activation& a, std::span<const uint8_t> w, int64_t k, int64_t n,
                        std::vector<uint8_t>& c) {
  const ref::Dims d{a.rows, k, n};
  c.resize(static_cast<size_t>(output_bytes(a.rows, n)));
  switch (dtype) {
    case matmul::DType::int8:
      return ref::matmul_int8_fast(a.i8, {reinterpret_cast<const int8_t*>(w.data()), w.size()},
                                   {reinterpret_cast<int32_t*>(c.data()), static_cast<size_t>(a.rows * n)}, d);
    case matmul::DType::int4:  // the oracle's check of every value, then its bits from the int8 kernels
      return ref::matmul_int4_fast(a.i8, {reinterpret_cast<const int8_t*>(w.data()), w.size()},
                                   {reinterpret_cast<int32_t*>(c.data()), static_cast<size_t>(a.rows * n)}, d);
    case matmul::DType::fp16: {  // the oracle's slice order, its bytes from the row path (fp16_matmul.h)
      auto plan = matmul::make_plan(matmul::Shape{1, k, n}, matmul::PlanOptions{.dtype = dtype, .cores = 1});
      if (!plan) return plan.error();
      return ref::matmul_fp16_rows(a.f16, {reinterpret_cast<const uint16_t*>(w.data()), w.size() / 2},
                                   {reinterpret_cast<float*>(c.data()), static_cast<size_t>(a.rows * n)}, d,
                                   plan->slice_k);
    }
  }
  return make_error(-EINVAL, "unknown dtype");
}

Result<ChainResult> reference_chain(const std::string& path, const PackedModel& model, int64_t m, int64_t tokens) {
  const ModelDesc& d = model.desc;
  const MatmulIndex names(d);
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return make_error(-errno, fmt::format("{}: {}", path, std::strerror(errno)));
  ChainResult r;
  std::vector<Activation> acts(d.matmuls.size());
  std::vector<uint8_t> native, rowmajor, c;
  Status st;
  for (int64_t tk = 0; tk < tokens && st; ++tk) {
    Activation x = token_input(d, m, tk);
    if (tk > 0) {  // autoregressive: the previous token's output joins the input
      const Activation* src[] = {&x, &r.outputs.back()};
      Activation sum;
      combine(d.dtype, src, sum);
      x = std::move(sum);
    }
    r.prints.emplace_back();
    for (int l = 0; l < d.layers && st; ++l) {
      for (size_t j = 0; j < d.matmuls.size() && st; ++j) {
        const MatmulDesc& md = d.matmuls[j];
        const PackedTensor& t = model.tensor(l, static_cast<int>(j));
        if (!(st = read_exact(f, t.offset, native, t.bytes, path))) break;
        if (!(st = unpack_weights(d.dtype, md.k, md.n, native, rowmajor, t.slice_k))) break;
        std::vector<const Activation*> src;
        for (const auto& s : md.inputs) src.push_back(s == "x" ? &x : &acts[static_cast<size_t>(names.find(s))]);
        Activation a;
        combine(d.dtype, src, a);
        if (!(st = reference_matmul(d.dtype, a, rowmajor, md.k, md.n, c))) break;
        r.prints.back().push_back(fingerprint(c));
        requantise(d.dtype, c.data(), a.rows, md.n, md.shift, acts[j]);
      }
      if (!st) break;
      std::vector<const Activation*> out;
      for (const auto& s : d.output) out.push_back(s == "x" ? &x : &acts[static_cast<size_t>(names.find(s))]);
      Activation next;
      combine(d.dtype, out, next);
      x = std::move(next);
    }
    r.outputs.push_back(std::move(x));
  }
  std::fclose(f);
  if (!st) return st.error();
  return r;
}

Status compare_chains(const PackedModel& model, const ChainResult& got, const ChainResult& want) {
  const ModelDesc& d = model.desc;
  if (got.prints.size() != want.prints.size() || got.outputs.size() != want.outputs.size())
    return make_error(-EIO, fmt::format("{} tokens computed, {} in the reference", got.prints.size(), want.prints.size()));
  for (size_t t = 0; t < want.prints.size(); ++t) {
    if (got.prints[t].size() != want.prints[t].size())
      return make_error(-EIO, fmt::format("token {}: {} matmul outputs, the reference has {}", t, got.prints[t].size(),
                                          want.prints[t].size()));
    for (size_t i = 0; i < want.prints[t].size(); ++i) {
      if (got.prints[t][i] != want.prints[t][i])
        return make_error(-EIO, fmt::format("token {}: layer {} matmul \"{}\" differs from the CPU reference", t,
                                            i / d.matmuls.size(), d.matmuls[i % d.matmuls.size()].name));
    }
    if (got.outputs[t].i8 != want.outputs[t].i8 || got.outputs[t].f16 != want.outputs[t].f16)
      return make_error(-EIO, fmt::format("token {}: the output differs from the CPU reference", t));
  }
  return {};
}

}  // namespace ork::exec
