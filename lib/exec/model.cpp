// Model descriptions: checks, JSON, and the synthetic shapes.
#include "lib/exec/model.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "driver/common/json.h"

namespace ork::exec {

int ModelDesc::find(const std::string& n) const {
  for (size_t i = 0; i < matmuls.size(); ++i)
    if (matmuls[i].name == n) return static_cast<int>(i);
  return -1;
}

int64_t ModelDesc::width_of(const std::string& source) const {
  if (source == "x") return hidden;
  const int i = find(source);
  return i < 0 ? -1 : matmuls[static_cast<size_t>(i)].n;
}

const char* dtype_key(matmul::DType dtype) { return matmul::dtype_name(dtype); }  // the dtype table

Result<matmul::DType> parse_dtype(const std::string& name) {
  if (const matmul::DTypeInfo* d = matmul::dtype_by_name(name)) return d->dtype;
  return make_error(-EINVAL, fmt::format("unknown dtype \"{}\": expected int8, int4 or fp16", name));
}

MatmulIndex::MatmulIndex(const ModelDesc& desc) {
  index_.reserve(desc.matmuls.size());
  first_.reserve(desc.matmuls.size());
  for (size_t i = 0; i < desc.matmuls.size(); ++i)
    first_.push_back(index_.try_emplace(desc.matmuls[i].name, static_cast<int>(i)).first->second);
}

int MatmulIndex::find(std::string_view name) const {
  const auto it = index_.find(name);
  return it == index_.end() ? -1 : it->second;
}

namespace {

// The sources of one input: present, earlier than `before` (a matmul index, or the number
// of matmuls for the layer output), all of width `want`. `what()` names the input, called
// for an error alone: a description at the size limit has 800,000 matmuls (lever 58).
template <typename What>
Status check_sources(const ModelDesc& d, const MatmulIndex& index, const std::vector<std::string>& sources, int before,
                     int64_t want, const What& what) {
  if (sources.empty()) return make_error(-EINVAL, fmt::format("{}: no inputs", what()));
  for (const auto& s : sources) {
    const int i = s == "x" ? -1 : index.find(s);
    if (s != "x" && i < 0) return make_error(-EINVAL, fmt::format("{}: unknown source \"{}\"", what(), s));
    if (s != "x" && i >= before)
      return make_error(-EINVAL, fmt::format("{}: source \"{}\" comes later in the layer", what(), s));
    const int64_t width = i < 0 ? d.hidden : d.matmuls[static_cast<size_t>(i)].n;
    if (width != want)
      return make_error(-EINVAL, fmt::format("{}: shapes do not chain: source \"{}\" is {} wide, {} expected",
                                             what(), s, width, want));
  }
  return {};
}

}  // namespace

Status check_desc(const ModelDesc& d) {
  if (d.hidden < 1) return make_error(-EINVAL, fmt::format("hidden = {}: must be >= 1", d.hidden));
  if (d.layers < 1) return make_error(-EINVAL, fmt::format("layers = {}: must be >= 1", d.layers));
  if (d.matmuls.empty()) return make_error(-EINVAL, "no matmuls in the layer");
  const MatmulIndex index(d);
  for (size_t i = 0; i < d.matmuls.size(); ++i) {
    const MatmulDesc& m = d.matmuls[i];
    if (m.name.empty() || m.name == "x") return make_error(-EINVAL, fmt::format("matmul {}: bad name \"{}\"", i, m.name));
    if (index.first_named(i) != static_cast<int>(i))
      return make_error(-EINVAL, fmt::format("matmul \"{}\" is named twice", m.name));
    if (m.k < 1 || m.n < 1 || m.k > (int64_t{1} << 20) || m.n > (int64_t{1} << 20))
      return make_error(-EINVAL, fmt::format("matmul \"{}\": K = {}, N = {}: each must be 1..2^20", m.name, m.k, m.n));
    if (m.shift < 0 || m.shift > 31)
      return make_error(-EINVAL, fmt::format("matmul \"{}\": shift = {}: must be 0..31", m.name, m.shift));
    const auto what = [&m] { return fmt::format("matmul \"{}\"", m.name); };
    if (auto s = check_sources(d, index, m.inputs, static_cast<int>(i), m.k, what); !s) return s;
    for (const auto& a : m.after) {
      const int j = index.find(a);
      if (j < 0 || j >= static_cast<int>(i))
        return make_error(-EINVAL, fmt::format("matmul \"{}\": \"after\" names \"{}\", not an earlier matmul", m.name, a));
    }
  }
  return check_sources(d, index, d.output, static_cast<int>(d.matmuls.size()), d.hidden, [] { return "layer output"; });
}

namespace {

constexpr const char* kDesc = "model description";
constexpr int64_t kMaxWidth = int64_t{1} << 20;  // check_desc's bound on K and N (and so hidden)

// A list of names ("input", "output", "after"): an array of strings.
Result<std::vector<std::string>> names(const nlohmann::json& v, const std::string& what) {
  if (!v.is_array()) return make_error(-EINVAL, fmt::format("{}: must be a list of names", what));
  std::vector<std::string> out;
  out.reserve(v.size());
  for (const auto& e : v) {
    if (!e.is_string()) return make_error(-EINVAL, fmt::format("{}: must be a list of names, got a JSON {}", what, e.type_name()));
    out.push_back(e.get<std::string>());
  }
  return out;
}

// One entry of "matmuls": integers read whole and in range (json_int).
Result<MatmulDesc> parse_matmul(const nlohmann::json& m, size_t i, matmul::DType dtype) {
  const std::string what = fmt::format("{}: matmul {}", kDesc, i);
  if (!m.is_object()) return make_error(-EINVAL, fmt::format("{}: not a JSON object", what));
  MatmulDesc md;
  md.name = m.at("name").get<std::string>();
  md.tensor = m.value("tensor", std::string());
  auto k = json_int<int64_t>(m, "k", 1, kMaxWidth, what);
  if (!k) return k.error();
  auto n = json_int<int64_t>(m, "n", 1, kMaxWidth, what);
  if (!n) return n.error();
  md.k = *k;
  md.n = *n;
  auto in = names(m.at("input"), what + " \"input\"");
  if (!in) return in.error();
  md.inputs = std::move(*in);
  if (m.contains("after")) {
    auto after = names(m.at("after"), what + " \"after\"");
    if (!after) return after.error();
    md.after = std::move(*after);
  }
  md.shift = synthetic_shift(md.k, dtype);
  if (m.contains("shift")) {
    auto shift = json_int<int>(m, "shift", 0, 31, what);
    if (!shift) return shift.error();
    md.shift = *shift;
  }
  return md;
}

}  // namespace

Result<ModelDesc> parse_desc(const std::string& text) {
  auto parsed = parse_json_bounded(text, kDesc);
  if (!parsed) return parsed.error();
  return desc_from_json(*parsed);
}

Result<ModelDesc> desc_from_json(const nlohmann::json& j) {
  if (!j.is_object()) return make_error(-EINVAL, "model description: not a JSON object");
  ModelDesc d;
  try {
    d.name = j.value("name", std::string("model"));
    auto dt = parse_dtype(j.at("dtype").get<std::string>());
    if (!dt) return dt.error();
    d.dtype = *dt;
    auto hidden = json_int<int64_t>(j, "hidden", 1, kMaxWidth, kDesc);
    if (!hidden) return hidden.error();
    d.hidden = *hidden;
    auto layers = json_int<int>(j, "layers", 1, std::numeric_limits<int>::max(), kDesc);
    if (!layers) return layers.error();
    d.layers = *layers;
    const std::string layout = j.value("layout", std::string("n_by_k"));
    if (layout != "n_by_k" && layout != "k_by_n")
      return make_error(-EINVAL, fmt::format("layout \"{}\": expected n_by_k or k_by_n", layout));
    d.n_by_k = layout == "n_by_k";
    const nlohmann::json& matmuls = j.at("matmuls");
    if (!matmuls.is_array()) return make_error(-EINVAL, "model description: \"matmuls\" must be a list");
    d.matmuls.reserve(matmuls.size());
    for (size_t i = 0; i < matmuls.size(); ++i) {
      auto md = parse_matmul(matmuls[i], i, d.dtype);
      if (!md) return md.error();
      d.matmuls.push_back(std::move(*md));
    }
    auto output = names(j.at("output"), "model description: \"output\"");
    if (!output) return output.error();
    d.output = std::move(*output);
  } catch (const nlohmann::json::exception& e) {
    return make_error(-EINVAL, fmt::format("model description: {}", e.what()));
  }
  if (auto s = check_desc(d); !s) return s.error();
  return d;
}

std::string desc_to_json(const ModelDesc& d) {
  nlohmann::json j;
  j["name"] = d.name;
  j["dtype"] = dtype_key(d.dtype);
  j["hidden"] = d.hidden;
  j["layers"] = d.layers;
  j["layout"] = d.n_by_k ? "n_by_k" : "k_by_n";
  j["matmuls"] = nlohmann::json::array();
  for (const auto& m : d.matmuls)
    j["matmuls"].push_back({{"name", m.name}, {"tensor", m.tensor}, {"k", m.k}, {"n", m.n},
                            {"input", m.inputs}, {"after", m.after}, {"shift", m.shift}});
  j["output"] = d.output;
  return j.dump(1);
}

uint64_t activation_bytes_bound(const ModelDesc& d, int64_t m, int inflight) {
  const double elem = d.dtype == matmul::DType::fp16 ? 2 : 1;
  double outputs = 0, widest_k = 0, widest_n = 0;
  for (const MatmulDesc& md : d.matmuls) {
    outputs += static_cast<double>(md.n);
    widest_k = std::max(widest_k, static_cast<double>(md.k));
    widest_n = std::max(widest_n, static_cast<double>(md.n));
  }
  // No more matmuls in flight than a layer has. Measured on emu (a 2^20-wide model of one
  // 2^20 x 1 matmul, ork_run --m 64 and 256): 5.2 MiB of peak RSS per row; this gives 7.
  const double in_flight = static_cast<double>(std::clamp<int64_t>(inflight, 1, static_cast<int64_t>(d.matmuls.size())));
  const double per_row = elem * (3 * static_cast<double>(d.hidden) + outputs) +
                         in_flight * 2 * (2 * elem * widest_k + 4 * widest_n);
  const double bytes = per_row * static_cast<double>(std::max<int64_t>(m, 1));
  return bytes >= 0x1p64 ? UINT64_MAX : static_cast<uint64_t>(bytes);
}

int synthetic_shift(int64_t k, matmul::DType dtype) {
  // The synthetic weights' standard deviation (synthetic.h): 73.9 (int8, uniform over the
  // codes), 3.5 (int4, Q4_0-shaped: measured over 640,000 codes of normal values so
  // quantised), 0.577 (fp16 uniform in [-1, 1)). A dot product of K terms grows by sqrt(K) * sd; dividing by the
  // nearest power of two times 4 gives each matmul a gain near 1/4, so the residual sums of
  // the layer (x + o + down) grow slowly: fp16 stays finite over many layers and tokens, and
  // integer activations do not all saturate.
  const double sd = dtype == matmul::DType::int8 ? 73.9 : dtype == matmul::DType::int4 ? 3.5 : 0.577;
  const double g = std::log2(std::sqrt(static_cast<double>(k)) * sd) + 2;
  return std::max(0, static_cast<int>(std::lround(g)));
}

Result<ModelDesc> synthetic_desc(const std::string& name, int layers, matmul::DType dtype) {
  struct Shape { const char* name; int64_t hidden, inter, kv; };
  static constexpr Shape kShapes[] = {{"tiny", 64, 160, 32},
                                      {"small", 512, 1408, 128},
                                      {"qwen2.5-1.5b", 1536, 8960, 256},
                                      {"7b", 3584, 18944, 512}};
  const Shape* s = nullptr;
  for (const auto& c : kShapes)
    if (name == c.name) s = &c;
  if (s == nullptr)
    return make_error(-EINVAL, fmt::format("unknown synthetic model \"{}\": expected tiny, small, qwen2.5-1.5b or 7b", name));
  if (layers < 1 || layers > 1024) return make_error(-EINVAL, fmt::format("--layers {}: must be 1..1024", layers));
  ModelDesc d;
  d.name = name;
  d.dtype = dtype;
  d.hidden = s->hidden;
  d.layers = layers;
  d.n_by_k = true;
  const int64_t h = s->hidden, i = s->inter, kv = s->kv;
  auto add = [&](const char* n, const char* t, int64_t k, int64_t nn, std::vector<std::string> in,
                 std::vector<std::string> after = {}) {
    d.matmuls.push_back({n, fmt::format("model.layers.{{layer}}.{}.weight", t), k, nn, std::move(in),
                         synthetic_shift(k, dtype), std::move(after)});
  };
  add("q", "self_attn.q_proj", h, h, {"x"});
  add("k", "self_attn.k_proj", h, kv, {"x"});
  add("v", "self_attn.v_proj", h, kv, {"x"});
  add("o", "self_attn.o_proj", h, h, {"q"}, {"k", "v"});
  add("gate", "mlp.gate_proj", h, i, {"x", "o"});
  add("up", "mlp.up_proj", h, i, {"x", "o"});
  add("down", "mlp.down_proj", i, h, {"gate", "up"});
  d.output = {"x", "o", "down"};
  if (auto st = check_desc(d); !st) return st.error();
  return d;
}

}  // namespace ork::exec
