// The matmul on tensors, shared by ork_matmul, ork_matmul_t and the async / batch calls
// (matmul_t.cpp): every check of a call, then the dense views the runner takes.
#pragma once

#include <cstdint>
#include <vector>

#include "lib/api/backend.h"
#include "lib/api/tensor.h"
#include "lib/matmul/run.h"
#include "ork/ork.h"

namespace ork::api {

// Copies `options` by the struct_size rules into `opt` and checks cores / mc_cap /
// core_mask / stats; `run` gets the cores and mask the call runs on. Messages start with
// `call`.
ork_status check_matmul_options(const char* call, const ork_device& device, const ork_matmul_options* options,
                                ork_matmul_options* opt, matmul::RunOptions* run);

// One matmul on tensors between its checks and its end. begin_tensor_call checks everything
// (device, weights, M, options, dtypes, both tensors), holds the buffers (BufferUse), starts
// the dma-buf CPU access of shared ones, and gives dense `a` / `c` for the runner. After the
// runner has written `c`, finish_tensor_call scatters it into a strided C and ends the CPU
// access; it returns `run` when that failed (the buffers' syncs still end), else its own
// status. A job keeps its TensorCall from submit to wait.
struct TensorCall {
  const char* call = "";
  Operand a_op, c_op;
  TensorRef a_ref, c_ref;
  BufferUse a_use, c_use;
  std::vector<uint8_t> a_scratch, c_scratch;
  const void* a = nullptr;  // dense M x K
  void* c = nullptr;        // dense M x N
  int64_t m = 0;
  ork_matmul_options opt{};
  matmul::RunOptions run;  // cores, core_mask (the NPU backend adds mc_cap, fp16_out)
  CallTypes types;         // A and C dtypes, resolved once
  bool a_started = false, c_started = false;
};
ork_status begin_tensor_call(const char* call, ork_device* device, const ork_weights* weights, const ork_tensor* a,
                             int64_t m, const ork_tensor* c, const ork_matmul_options* options, TensorCall* out);
ork_status finish_tensor_call(TensorCall& t, ork_status run);

// begin, the backend's multiply (accounted by a CallMeter, stats.h), finish: the sync call.
ork_status matmul_tensors(const char* call, ork_device* device, const ork_weights* weights, const ork_tensor* a,
                          int64_t m, const ork_tensor* c, const ork_matmul_options* options);
// ork_matmul: dense host A and C, checked as matmul_tensors checks two dense host tensors
// (the same messages), then handed to the backend as they are.
ork_status matmul_dense(const char* call, ork_device* device, const ork_weights* weights, const void* a, int64_t m,
                        void* c, const ork_matmul_options* options);

}  // namespace ork::api
