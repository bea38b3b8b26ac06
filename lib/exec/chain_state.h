// The activations of a run in flight (the executor's device thread's own): each (token,
// layer)'s input x and its matmuls' outputs, made as the matmuls complete, whole or a row
// piece at a time, by the rule of activation.h. Every step of that rule works element by
// element, so rows [r0, r0 + n) of any activation are made from rows [r0, r0 + n) of its
// sources alone: a group run in row pieces (board_plan.h row_pieces) can feed the next
// group piece by piece (docs/execution.md "Host and device overlapped").
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "lib/exec/activation.h"
#include "lib/exec/model.h"

namespace ork::exec {

class ChainState {
 public:
  // `outputs`: per token (sized here), the last layer's output, written as tokens finish.
  // `first_input`: token 0's input, or null for the synthetic token_input(0).
  ChainState(const ModelDesc& desc, int64_t m, int tokens, const Activation* first_input,
             std::vector<Activation>& outputs);

  // Matmul `matmul`'s A at (t, l): the sum of its sources, whole.
  Activation input(int t, int l, int matmul);
  // The same, rows [r0, r0 + n) only: each source's rows must have been made (put).
  Activation input_rows(int t, int l, int matmul, int64_t r0, int64_t n);
  // Rows [r0, r0 + rows) of matmul `matmul`'s output at (t, l) from its C (int32 or fp32, the
  // whole C of m rows), requantised into its activation.
  void put(int t, int l, int matmul, const void* c, int64_t r0, int64_t rows);
  // The matmul's output is whole: when it was the layer's last, the next layer's input is
  // made and what nobody reads any more dropped; true when that finished token t.
  bool done(int t, int l);

 private:
  const Activation& x_of(int t, int l);
  const Activation* source(int t, int l, const std::string& s);
  Activation source_rows(int t, int l, const std::string& s, int64_t r0, int64_t n);
  Activation sum(std::vector<Activation> parts) const;

  const ModelDesc& d_;
  const MatmulIndex names_{d_};
  int64_t m_;
  const Activation* first_input_;
  std::vector<Activation>& outputs_;
  int finished_tokens_ = 0;
  std::map<std::pair<int, int>, std::vector<Activation>> acts_;
  std::map<std::pair<int, int>, Activation> x_;
  std::vector<std::vector<size_t>> done_;  // per token and layer: matmuls whose output is whole
};

}  // namespace ork::exec
