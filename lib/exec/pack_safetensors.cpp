// Packing a safetensors model (pack_safetensors.h).
#include "lib/exec/pack_safetensors.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <vector>

#include <fmt/format.h>

#include "driver/common/safe_file.h"
#include "lib/exec/pack_file.h"
#include "lib/io/safetensors.h"
#include "lib/quant/qweights.h"
#include "driver/common/fp16.h"

namespace ork::exec {
namespace {

// Element (r, c) of the stored tensor -> element index of the K x N matrix.
struct Orient {
  bool n_by_k;
  int64_t k, n;
  size_t dst(int64_t i) const {
    if (!n_by_k) return static_cast<size_t>(i);
    const int64_t row = i / k, col = i % k;  // stored N x K: row = n, col = k
    return static_cast<size_t>(col * n + row);
  }
};

Result<std::vector<float>> to_float(const io::TensorInfo& t, const std::vector<uint8_t>& raw, const Orient& o) {
  const int64_t count = o.k * o.n;
  std::vector<float> f(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    float v;
    if (t.dtype == "F32") {
      std::memcpy(&v, &raw[static_cast<size_t>(i) * 4], 4);
    } else if (t.dtype == "F16") {
      uint16_t h;
      std::memcpy(&h, &raw[static_cast<size_t>(i) * 2], 2);
      v = ork::half_to_float(h);
    } else if (t.dtype == "BF16") {
      uint16_t h;
      std::memcpy(&h, &raw[static_cast<size_t>(i) * 2], 2);
      const uint32_t bits = static_cast<uint32_t>(h) << 16;
      std::memcpy(&v, &bits, 4);
    } else {
      return make_error(-EINVAL, fmt::format("tensor \"{}\": dtype {} cannot be converted to floats", t.name, t.dtype));
    }
    f[o.dst(i)] = v;
  }
  return f;
}

// An fp16 model's weight (element i of the K x N matrix) must be a finite fp16: NaN or an
// infinity (or an F32 / BF16 past fp16's 65504, which rounds to one) would reach every
// product it enters, as the integer path's quantiser refuses them (quant::check_finite).
Status check_fp16(const io::TensorInfo& t, const MatmulDesc& md, int64_t i, float source, uint16_t h) {
  if ((h & 0x7c00) != 0x7c00) return {};  // exponent all ones: inf or NaN
  return make_error(-EINVAL, fmt::format("tensor \"{}\": W[{}][{}] = {}: fp16 weights must be finite{}", t.name,
                                         i / md.n, i % md.n, source,
                                         std::isfinite(source) ? " (past fp16's 65504, it rounds to infinity)" : ""));
}

// Host-format K x N weights (and scales) for the model dtype.
Status convert(const io::TensorInfo& t, const std::vector<uint8_t>& raw, const ModelDesc& d, const MatmulDesc& md,
               std::vector<uint8_t>& out, std::vector<float>& scales) {
  const Orient o{d.n_by_k, md.k, md.n};
  const int64_t count = md.k * md.n;
  scales.clear();
  if (d.dtype == matmul::DType::int8 && t.dtype == "I8") {
    out.resize(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i) out[o.dst(i)] = raw[static_cast<size_t>(i)];
    return {};
  }
  if (d.dtype == matmul::DType::fp16 && t.dtype == "F16") {
    out.resize(static_cast<size_t>(count) * 2);
    for (int64_t i = 0; i < count; ++i) {
      uint16_t h;
      std::memcpy(&h, &raw[static_cast<size_t>(i) * 2], 2);
      const auto at = static_cast<int64_t>(o.dst(i));
      if (auto st = check_fp16(t, md, at, ork::half_to_float(h), h); !st) return st;
      std::memcpy(&out[static_cast<size_t>(at) * 2], &h, 2);
    }
    return {};
  }
  auto f = to_float(t, raw, o);
  if (!f) return f.error();
  if (d.dtype == matmul::DType::fp16) {
    out.resize(static_cast<size_t>(count) * 2);
    for (int64_t i = 0; i < count; ++i) {
      const uint16_t h = ork::float_to_half((*f)[static_cast<size_t>(i)]);
      if (auto st = check_fp16(t, md, i, (*f)[static_cast<size_t>(i)], h); !st) return st;
      std::memcpy(&out[static_cast<size_t>(i) * 2], &h, 2);
    }
    return {};
  }
  const quant::Bits bits = d.dtype == matmul::DType::int8 ? quant::Bits::int8 : quant::Bits::int4;
  auto q = quant::QuantWeights::quantise(*f, md.k, md.n, quant::WeightScheme{bits, 0});
  if (!q) return make_error(q.error().code, fmt::format("tensor \"{}\": {}", t.name, q.error().message));
  out.assign(q->codes().begin(), q->codes().end());
  scales.assign(q->scales().begin(), q->scales().end());
  return {};
}

}  // namespace

std::string tensor_name(const MatmulDesc& m, int layer) {
  std::string s = m.tensor;
  const std::string key = "{layer}";
  if (auto p = s.find(key); p != std::string::npos) s.replace(p, key.size(), std::to_string(layer));
  return s;
}

namespace {

// The tensor of every (layer, matmul), layer-major, each looked up and its shape checked
// before anything is written. Each is a tensor of its own: a description's layers are backed
// by the file's tensors (a pattern without "{layer}" once packed one tensor 100,000 times
// from a 145-byte description), so the output is bounded by the input.
Result<std::vector<const io::TensorInfo*>> match_tensors(const std::string& path, const io::SafetensorsFile& st,
                                                         const ModelDesc& d) {
  std::map<std::string, const io::TensorInfo*> by_name;
  for (const auto& t : st.tensors) by_name[t.name] = &t;
  std::map<std::string, int> used;  // tensor name -> the layer that took it
  std::vector<const io::TensorInfo*> out;
  for (int l = 0; l < d.layers; ++l) {
    for (const auto& md : d.matmuls) {
      const std::string name = tensor_name(md, l);
      auto it = by_name.find(name);
      if (it == by_name.end()) return make_error(-EINVAL, fmt::format("{}: tensor \"{}\" is missing", path, name));
      if (auto [at, fresh] = used.emplace(name, l); !fresh)
        return make_error(-EINVAL, fmt::format("{}: tensor \"{}\" is named by layer {} and layer {}: each layer's "
                                               "matmul needs a tensor of its own (\"{{layer}}\" in the pattern)",
                                               path, name, at->second, l));
      const auto& shape = it->second->shape;
      const uint64_t rows = static_cast<uint64_t>(d.n_by_k ? md.n : md.k), cols = static_cast<uint64_t>(d.n_by_k ? md.k : md.n);
      if (shape.size() != 2 || shape[0] != rows || shape[1] != cols)
        return make_error(-EINVAL, fmt::format("{}: tensor \"{}\" has shape {}, the description says [{}, {}]", path, name,
                                               fmt::join(shape, "x"), rows, cols));
      out.push_back(it->second);
    }
  }
  return out;
}

// match_tensors, with the bound named when the description asks for more tensors than the
// file holds. The loop itself stops within the file's tensor count (each match takes a
// tensor of its own), whatever `layers` says.
Result<std::vector<const io::TensorInfo*>> find_tensors(const std::string& path, const io::SafetensorsFile& st,
                                                        const ModelDesc& d) {
  auto found = match_tensors(path, st, d);
  const uint64_t count = static_cast<uint64_t>(d.layers) * d.matmuls.size();
  if (found || count <= st.tensors.size()) return found;
  return make_error(-EINVAL, fmt::format("{}: the description's {} layers x {} matmuls name {} tensors; the file holds "
                                         "{}: each layer's matmul needs a tensor of its own ({})",
                                         path, d.layers, d.matmuls.size(), count, st.tensors.size(),
                                         found.error().message.substr(path.size() + 2)));
}

// Whether convert() stores scales for a tensor: integer models quantised from floats do.
bool has_scales(const ModelDesc& d, const io::TensorInfo& t) {
  return d.dtype != matmul::DType::fp16 && !(d.dtype == matmul::DType::int8 && t.dtype == "I8");
}

}  // namespace

Result<uint64_t> safetensors_pack_bytes(const std::string& path, const ModelDesc& d) {
  auto st = io::read_safetensors(path);
  if (!st) return st.error();
  auto tensors = find_tensors(path, *st, d);
  if (!tensors) return tensors.error();
  const size_t per = d.matmuls.size();
  return packed_file_bytes(d, [&](int l, int j) {
    return has_scales(d, *(*tensors)[static_cast<size_t>(l) * per + static_cast<size_t>(j)]);
  });
}

Status pack_safetensors(const std::string& path, const ModelDesc& d, const std::string& out_path,
                        const std::function<void(int64_t, int64_t)>& progress) {
  auto st = io::read_safetensors(path);
  if (!st) return st.error();
  auto tensors = find_tensors(path, *st, d);
  if (!tensors) return tensors.error();
  auto w = PackWriter::create(out_path, d);
  if (!w) return w.error();
  auto fd = open_regular_input(path);
  if (!fd) return fd.error();
  std::FILE* f = ::fdopen(*fd, "rb");
  if (f == nullptr) {
    ::close(*fd);
    return make_error(-ENOMEM, fmt::format("{}: fdopen failed", path));
  }
  std::vector<uint8_t> raw, host;
  std::vector<float> scales;
  const int64_t total = static_cast<int64_t>(d.layers) * static_cast<int64_t>(d.matmuls.size());
  int64_t done = 0;
  Status s;
  for (int l = 0; l < d.layers && s; ++l) {
    for (size_t j = 0; j < d.matmuls.size() && s; ++j) {
      const io::TensorInfo& t = *(*tensors)[static_cast<size_t>(l) * d.matmuls.size() + j];
      raw.resize(t.bytes());
      if (std::fseek(f, static_cast<long>(t.file_offset), SEEK_SET) != 0 || std::fread(raw.data(), 1, raw.size(), f) != raw.size()) {
        s = make_error(-EIO, fmt::format("{}: short read of tensor \"{}\"", path, t.name));
        break;
      }
      if (!(s = convert(t, raw, d, d.matmuls[j], host, scales))) break;
      s = w->add(l, static_cast<int>(j), host.data(), scales);
      if (s && progress) progress(++done, total);
    }
  }
  std::fclose(f);
  if (!s) return s;
  return w->finish();
}

}  // namespace ork::exec
