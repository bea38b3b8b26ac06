// Model descriptions: checks, JSON, and the synthetic shapes.
#include "lib/exec/model.h"

#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

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

const char* dtype_key(matmul::DType dtype) {
  switch (dtype) {
    case matmul::DType::int8: return "int8";
    case matmul::DType::int4: return "int4";
    case matmul::DType::fp16: return "fp16";
  }
  return "?";
}

Result<matmul::DType> parse_dtype(const std::string& name) {
  for (auto d : {matmul::DType::int8, matmul::DType::int4, matmul::DType::fp16})
    if (name == dtype_key(d)) return d;
  return make_error(-EINVAL, fmt::format("unknown dtype \"{}\": expected int8, int4 or fp16", name));
}

namespace {

// The sources of one input: present, earlier than `before` (a matmul index, or the number
// of matmuls for the layer output), all of width `want`.
Status check_sources(const ModelDesc& d, const std::vector<std::string>& sources, int before,
                     int64_t want, const std::string& what) {
  if (sources.empty()) return make_error(-EINVAL, fmt::format("{}: no inputs", what));
  for (const auto& s : sources) {
    const int i = d.find(s);
    if (s != "x" && i < 0) return make_error(-EINVAL, fmt::format("{}: unknown source \"{}\"", what, s));
    if (s != "x" && i >= before)
      return make_error(-EINVAL, fmt::format("{}: source \"{}\" comes later in the layer", what, s));
    if (d.width_of(s) != want)
      return make_error(-EINVAL, fmt::format("{}: shapes do not chain: source \"{}\" is {} wide, {} expected",
                                             what, s, d.width_of(s), want));
  }
  return {};
}

}  // namespace

Status check_desc(const ModelDesc& d) {
  if (d.hidden < 1) return make_error(-EINVAL, fmt::format("hidden = {}: must be >= 1", d.hidden));
  if (d.layers < 1) return make_error(-EINVAL, fmt::format("layers = {}: must be >= 1", d.layers));
  if (d.matmuls.empty()) return make_error(-EINVAL, "no matmuls in the layer");
  for (size_t i = 0; i < d.matmuls.size(); ++i) {
    const MatmulDesc& m = d.matmuls[i];
    if (m.name.empty() || m.name == "x") return make_error(-EINVAL, fmt::format("matmul {}: bad name \"{}\"", i, m.name));
    if (d.find(m.name) != static_cast<int>(i))
      return make_error(-EINVAL, fmt::format("matmul \"{}\" is named twice", m.name));
    if (m.k < 1 || m.n < 1 || m.k > (int64_t{1} << 20) || m.n > (int64_t{1} << 20))
      return make_error(-EINVAL, fmt::format("matmul \"{}\": K = {}, N = {}: each must be 1..2^20", m.name, m.k, m.n));
    if (m.shift < 0 || m.shift > 31)
      return make_error(-EINVAL, fmt::format("matmul \"{}\": shift = {}: must be 0..31", m.name, m.shift));
    if (auto s = check_sources(d, m.inputs, static_cast<int>(i), m.k, fmt::format("matmul \"{}\"", m.name)); !s)
      return s;
    for (const auto& a : m.after) {
      const int j = d.find(a);
      if (j < 0 || j >= static_cast<int>(i))
        return make_error(-EINVAL, fmt::format("matmul \"{}\": \"after\" names \"{}\", not an earlier matmul", m.name, a));
    }
  }
  return check_sources(d, d.output, static_cast<int>(d.matmuls.size()), d.hidden, "layer output");
}

Result<ModelDesc> parse_desc(const std::string& text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return make_error(-EINVAL, "model description: not a JSON object");
  ModelDesc d;
  try {
    d.name = j.value("name", std::string("model"));
    auto dt = parse_dtype(j.at("dtype").get<std::string>());
    if (!dt) return dt.error();
    d.dtype = *dt;
    d.hidden = j.at("hidden").get<int64_t>();
    d.layers = j.at("layers").get<int>();
    const std::string layout = j.value("layout", std::string("n_by_k"));
    if (layout != "n_by_k" && layout != "k_by_n")
      return make_error(-EINVAL, fmt::format("layout \"{}\": expected n_by_k or k_by_n", layout));
    d.n_by_k = layout == "n_by_k";
    for (const auto& m : j.at("matmuls")) {
      MatmulDesc md;
      md.name = m.at("name").get<std::string>();
      md.tensor = m.value("tensor", std::string());
      md.k = m.at("k").get<int64_t>();
      md.n = m.at("n").get<int64_t>();
      md.inputs = m.at("input").get<std::vector<std::string>>();
      if (m.contains("after")) md.after = m.at("after").get<std::vector<std::string>>();
      md.shift = m.contains("shift") ? m.at("shift").get<int>() : synthetic_shift(md.k, d.dtype);
      d.matmuls.push_back(std::move(md));
    }
    d.output = j.at("output").get<std::vector<std::string>>();
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

int synthetic_shift(int64_t k, matmul::DType dtype) {
  // Weights uniform over the whole code range: standard deviation 73.9 (int8), 4.6 (int4),
  // 0.577 (fp16 in [-1, 1)). A dot product of K terms grows by sqrt(K) * sd; dividing by the
  // nearest power of two times 4 gives each matmul a gain near 1/4, so the residual sums of
  // the layer (x + o + down) grow slowly: fp16 stays finite over many layers and tokens, and
  // integer activations do not all saturate.
  const double sd = dtype == matmul::DType::int8 ? 73.9 : dtype == matmul::DType::int4 ? 4.6 : 0.577;
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
