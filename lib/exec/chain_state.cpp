// The activations of a run in flight (chain_state.h).
#include "lib/exec/chain_state.h"

#include <algorithm>
#include <cstring>

#include "lib/exec/synthetic.h"

namespace ork::exec {
namespace {

// Rows [r0, r0 + n) of `a` (both element vectors, whichever the dtype uses).
Activation rows_of(const Activation& a, int64_t r0, int64_t n) {
  Activation out;
  out.rows = n;
  out.width = a.width;
  const size_t from = static_cast<size_t>(r0 * a.width), count = static_cast<size_t>(n * a.width);
  if (!a.i8.empty()) out.i8.assign(a.i8.begin() + static_cast<ptrdiff_t>(from), a.i8.begin() + static_cast<ptrdiff_t>(from + count));
  if (!a.f16.empty()) out.f16.assign(a.f16.begin() + static_cast<ptrdiff_t>(from), a.f16.begin() + static_cast<ptrdiff_t>(from + count));
  return out;
}

}  // namespace

ChainState::ChainState(const ModelDesc& desc, int64_t m, int tokens, const Activation* first_input,
                       std::vector<Activation>& outputs)
    : d_(desc), m_(m), first_input_(first_input), outputs_(outputs),
      done_(static_cast<size_t>(tokens), std::vector<size_t>(static_cast<size_t>(desc.layers), 0)) {
  outputs_.resize(static_cast<size_t>(tokens));
}

Activation ChainState::sum(std::vector<Activation> parts) const {
  std::vector<const Activation*> src;
  for (const Activation& p : parts) src.push_back(&p);
  Activation out;
  combine(d_.dtype, src, out);
  return out;
}

const Activation& ChainState::x_of(int t, int l) {
  auto key = std::make_pair(t, l);
  if (auto it = x_.find(key); it != x_.end()) return it->second;
  Activation x;
  if (l == 0) {
    x = (t == 0 && first_input_ != nullptr) ? *first_input_ : token_input(d_, m_, t);
    if (t > 0) {  // autoregressive: token t-1's output is part of token t's input
      const Activation& prev = finished_tokens_ > t - 1 ? outputs_[static_cast<size_t>(t - 1)] : x_of(t - 1, d_.layers);
      const Activation* src[] = {&x, &prev};
      Activation s;
      combine(d_.dtype, src, s);
      x = std::move(s);
    }
  } else {
    std::vector<const Activation*> src;
    for (const auto& s : d_.output) src.push_back(source(t, l - 1, s));
    combine(d_.dtype, src, x);
  }
  return x_.emplace(key, std::move(x)).first->second;
}

const Activation* ChainState::source(int t, int l, const std::string& s) {
  if (s == "x") return &x_of(t, l);
  return &acts_[{t, l}][static_cast<size_t>(names_.find(s))];
}

// The layer's input rows before the previous layer is done (its output made piece by piece)
// are summed from that layer's output sources' rows; once made, x is whole.
Activation ChainState::source_rows(int t, int l, const std::string& s, int64_t r0, int64_t n) {
  if (s != "x" || l == 0 || x_.count({t, l}) != 0) return rows_of(*source(t, l, s), r0, n);
  std::vector<Activation> parts;
  for (const auto& o : d_.output) parts.push_back(source_rows(t, l - 1, o, r0, n));
  return sum(std::move(parts));
}

Activation ChainState::input(int t, int l, int matmul) {
  std::vector<const Activation*> src;
  for (const auto& s : d_.matmuls[static_cast<size_t>(matmul)].inputs) src.push_back(source(t, l, s));
  Activation a;
  combine(d_.dtype, src, a);
  return a;
}

Activation ChainState::input_rows(int t, int l, int matmul, int64_t r0, int64_t n) {
  std::vector<Activation> parts;
  for (const auto& s : d_.matmuls[static_cast<size_t>(matmul)].inputs) parts.push_back(source_rows(t, l, s, r0, n));
  return sum(std::move(parts));
}

void ChainState::put(int t, int l, int matmul, const void* c, int64_t r0, int64_t rows) {
  const MatmulDesc& md = d_.matmuls[static_cast<size_t>(matmul)];
  std::vector<Activation>& acts = acts_[{t, l}];
  acts.resize(d_.matmuls.size());
  Activation& whole = acts[static_cast<size_t>(matmul)];
  const void* from = static_cast<const uint8_t*>(c) + output_bytes(r0, md.n);
  if (r0 == 0 && rows == m_) return requantise(d_.dtype, from, rows, md.n, md.shift, whole);
  Activation part;
  requantise(d_.dtype, from, rows, md.n, md.shift, part);
  whole.rows = m_;
  whole.width = md.n;
  const size_t at = static_cast<size_t>(r0 * md.n), count = static_cast<size_t>(m_ * md.n);
  if (d_.dtype == matmul::DType::fp16) {
    whole.f16.resize(count);
    std::copy(part.f16.begin(), part.f16.end(), whole.f16.begin() + static_cast<ptrdiff_t>(at));
  } else {
    whole.i8.resize(count);
    std::copy(part.i8.begin(), part.i8.end(), whole.i8.begin() + static_cast<ptrdiff_t>(at));
  }
}

bool ChainState::done(int t, int l) {
  if (++done_[static_cast<size_t>(t)][static_cast<size_t>(l)] != d_.matmuls.size()) return false;
  const Activation next = x_of(t, l + 1);
  acts_.erase({t, l});
  x_.erase({t, l});
  if (l + 1 != d_.layers) return false;
  outputs_[static_cast<size_t>(t)] = next;
  x_.erase({t, l + 1});
  ++finished_tokens_;
  return true;
}

}  // namespace ork::exec
