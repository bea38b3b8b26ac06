// oneDNN baselines (baselines.h). Two entry points, because they take different code paths:
// dnnl_gemm_s8s8s32 (the BLAS-like GEMM) and the matmul primitive (which may use AMX).
#include "tools/ork_bench/baselines.h"

#include "ork_config.h"

#if ORK_HAVE_DNNL
#include <dnnl.hpp>
#include <fmt/core.h>
#endif

namespace ork::bench {

#if ORK_HAVE_DNNL

namespace {

Candidate gemm_candidate(int64_t m, int64_t k, int64_t n) {
  return {"onednn_gemm_s8s8s32",
          [=](std::span<const int8_t> a, std::span<const int8_t> b, std::span<int32_t> c,
              std::string& error) {
            const int32_t zero_offset = 0;  // offsetc 'F': one fixed C offset
            const dnnl_status_t st = dnnl_gemm_s8s8s32('N', 'N', 'F', m, n, k, 1.0f, a.data(), k,
                                                       0, b.data(), n, 0, 0.0f, c.data(), n,
                                                       &zero_offset);
            if (st != dnnl_success) error = fmt::format("dnnl_gemm_s8s8s32 returned {}", int(st));
            return st == dnnl_success;
          }};
}

// The matmul primitive is created once; each run only executes it on the caller's buffers.
Candidate matmul_candidate(int64_t m, int64_t k, int64_t n) {
  using namespace dnnl;
  using dt = memory::data_type;
  using tag = memory::format_tag;
  auto eng = std::make_shared<engine>(engine::kind::cpu, 0);
  const memory::desc a_md({m, k}, dt::s8, tag::ab), b_md({k, n}, dt::s8, tag::ab),
      c_md({m, n}, dt::s32, tag::ab);
  auto prim = std::make_shared<matmul>(matmul::primitive_desc(matmul::desc(a_md, b_md, c_md), *eng));
  return {"onednn_matmul",
          [=](std::span<const int8_t> a, std::span<const int8_t> b, std::span<int32_t> c,
              std::string& error) {
            try {
              stream s(*eng);
              memory am(a_md, *eng, const_cast<int8_t*>(a.data()));
              memory bm(b_md, *eng, const_cast<int8_t*>(b.data()));
              memory cm(c_md, *eng, c.data());
              prim->execute(s, {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bm}, {DNNL_ARG_DST, cm}});
              s.wait();
              return true;
            } catch (const dnnl::error& e) {
              error = e.what();
              return false;
            }
          }};
}

}  // namespace

std::vector<Candidate> onednn_candidates(int64_t m, int64_t k, int64_t n) {
  std::vector<Candidate> out{gemm_candidate(m, k, n)};
  try {
    out.push_back(matmul_candidate(m, k, n));
  } catch (const dnnl::error&) {
    // No int8 matmul implementation on this CPU: the GEMM baseline alone.
  }
  return out;
}

const char* isa_text(dnnl_cpu_isa_t isa) {
  switch (isa) {  // the values of dnnl_types.h that matter on x86-64 servers
    case dnnl_cpu_isa_avx2: return "avx2";
    case dnnl_cpu_isa_avx2_vnni: return "avx2_vnni";
    case dnnl_cpu_isa_avx512_core: return "avx512_core";
    case dnnl_cpu_isa_avx512_core_vnni: return "avx512_core_vnni";
    case dnnl_cpu_isa_avx512_core_bf16: return "avx512_core_bf16";
    case dnnl_cpu_isa_avx512_core_amx: return "avx512_core_amx";
    default: return "other";
  }
}

std::string onednn_description() {
  const dnnl_version_t* v = dnnl_version();
  return fmt::format("oneDNN {}.{}.{}, max ISA {}", v->major, v->minor, v->patch,
                     isa_text(dnnl_get_effective_cpu_isa()));
}

#else

std::vector<Candidate> onednn_candidates(int64_t, int64_t, int64_t) { return {}; }
std::string onednn_description() { return "not built (the optional dnnl dependency was not found)"; }

#endif

}  // namespace ork::bench
