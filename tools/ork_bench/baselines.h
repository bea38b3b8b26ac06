// Baselines ork_bench measures the CPU reference against: oneDNN's int8 GEMM and its matmul
// primitive when the optional `dnnl` dependency was found at configure time.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace ork::bench {

struct Candidate {
  std::string name;  // e.g. "onednn_gemm_s8s8s32"
  // Computes C = A x B (row-major int8 -> int32). Returns false with `error` on failure.
  std::function<bool(std::span<const int8_t>, std::span<const int8_t>, std::span<int32_t>,
                     std::string& error)> run;
};

// The oneDNN candidates for an M x K x N problem; empty when built without oneDNN.
std::vector<Candidate> onednn_candidates(int64_t m, int64_t k, int64_t n);
// "oneDNN 2.6.3 (avx512_core_amx)" or "not built".
std::string onednn_description();

}  // namespace ork::bench
