// The one door from the golden tests into libork: a shape in, the words libork's planner
// and emitter write for it out. Plain types only, so that the decoder and the comparison
// (npu_facts.*, test_golden.cpp) never see a libork header (check_independent.py).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace golden {

struct OrkRequest {
  std::string dtype;  // "int8", "fp16", "int4"
  int64_t m = 0, k = 0, n = 0;
  bool fp16_out = false;
  uint32_t feature_iova = 0, weight_iova = 0, output_iova = 0;
};

struct OrkStream {
  std::vector<uint64_t> words;  // the single task, trailer included
  std::string error;            // non-empty: the shape did not plan/emit as one task
};

// Plans the shape on one core and emits it at the given buffer addresses.
OrkStream ork_task_stream(const OrkRequest& request);

}  // namespace golden
