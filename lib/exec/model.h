// A model as the executor sees it (docs/execution.md "The model"): a stack of layers that
// all have the same matmuls. Each matmul multiplies one K x N weight tensor by its input
// activation; the input is the saturating sum of one or more named activations ("x" = the
// layer's input, or an earlier matmul of the same layer), so parallel matmuls (q/k/v,
// gate/up) share an input and residual adds are written as extra sources. The layer's
// output (the next layer's "x") is such a sum too. Activations follow activation.h.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "driver/common/result.h"
#include "lib/matmul/plan.h"

namespace ork::exec {

struct MatmulDesc {
  std::string name;                 // "q", "gate", ...: unique within a layer
  std::string tensor;               // the safetensors name pattern ("{layer}" = the layer number)
  int64_t k = 0, n = 0;             // the weights are K x N (input width K, output width N)
  std::vector<std::string> inputs;  // sources summed into A: "x" or earlier matmuls
  int shift = 0;                    // requantisation shift (activation.h), 0..31
  // Earlier matmuls that must have run first without feeding A: what attention adds
  // between q/k/v and o (o reads the token's K/V cache entries). Ordering only.
  std::vector<std::string> after;
};

struct ModelDesc {
  std::string name = "model";
  matmul::DType dtype = matmul::DType::int8;
  int64_t hidden = 0;                // width of "x"
  int layers = 0;
  bool n_by_k = true;                // safetensors tensors stored N x K (Hugging Face Linear)
  std::vector<MatmulDesc> matmuls;   // in the layer's dataflow order
  std::vector<std::string> output;   // sources of the layer's output (width hidden)

  int find(const std::string& name) const;  // index of a matmul, -1 when none
  int64_t width_of(const std::string& source) const;  // "x" -> hidden; a matmul -> its N; -1
};

// Each matmul's name to its index (the first when named twice), built in one pass: loops
// over a layer's matmuls look their sources up here, since ModelDesc::find scans and a scan
// per source made a description of 100,000 matmuls quadratic. It holds views of the
// description's names: the description must outlive it, its names unchanged.
class MatmulIndex {
 public:
  explicit MatmulIndex(const ModelDesc& desc);
  int find(std::string_view name) const;  // -1 when none ("x" included)
  // find(the name of matmul i), remembered from the one pass: check_desc's test for a name
  // given twice, without a second lookup per matmul.
  int first_named(size_t i) const { return first_[i]; }

 private:
  std::unordered_map<std::string_view, int> index_;
  std::vector<int> first_;
};

// Checks names, dtypes and that the shapes chain: every source exists and comes earlier,
// the sources of one input have one width and it equals the matmul's K, the output's
// width equals hidden. Each error names the matmul and the source.
Status check_desc(const ModelDesc& desc);

// The model description JSON (docs/execution.md "Model description"), read with
// nlohmann-json; every field is checked and a bad one named. The text is parsed with
// parse_json_bounded (driver/common/json.h: nesting bounded first), its integers read with
// json_int (whole and in range); desc_from_json is the same on a parsed value (a packed
// model's header holds the description as its "model" object).
Result<ModelDesc> parse_desc(const std::string& json_text);
Result<ModelDesc> desc_from_json(const nlohmann::json& j);
std::string desc_to_json(const ModelDesc& desc);

const char* dtype_key(matmul::DType dtype);           // "int8", "int4", "fp16"
Result<matmul::DType> parse_dtype(const std::string& name);

// The host memory a run's activations may hold at once, in bytes, for M = `m` rows
// (docs/execution.md "The plan", the budgets): the layer inputs alive (a layer's x, the next layer's and
// the previous token's output: 3 x hidden), one layer's matmul outputs (the sum of its N),
// and for each of `inflight` matmuls (at most a layer's) its A twice (the sum of its sources, the operand
// handed over) and its C (4 bytes a cell), each copied once more by the device (its BOs,
// the emulated NPU's host memory). The weights' slots are the budget's, not counted here.
// Saturates at UINT64_MAX. A caller checks it against the memory available before a run
// (ork_run --m): M x hidden is the input's to choose, and 1024 rows of a 2^20-wide model
// once took 5.5 GB.
uint64_t activation_bytes_bound(const ModelDesc& desc, int64_t m, int inflight);

// Synthetic models of real shapes (docs/execution.md "Synthetic models"):
//   tiny          hidden 64,   intermediate 160,   k/v 32  (tests)
//   small         hidden 512,  intermediate 1408,  k/v 128 (the README's main job)
//   qwen2.5-1.5b  hidden 1536, intermediate 8960,  k/v 256
//   7b            hidden 3584, intermediate 18944, k/v 512
// Seven matmuls per layer: q, k, v (from x), o (from q, after k and v), gate and up (from x + o),
// down (from gate + up); the layer output is x + o + down. Shifts keep activations from
// vanishing or saturating (synthetic_shift).
Result<ModelDesc> synthetic_desc(const std::string& name, int layers, matmul::DType dtype);
// The shift that maps a K-long dot product of random weights onto the activation range.
int synthetic_shift(int64_t k, matmul::DType dtype);

}  // namespace ork::exec
