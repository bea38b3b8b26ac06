// The synthetic safetensors writer (synthetic_safetensors.h).
#include "tools/ork_stream/synthetic_safetensors.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "driver/common/safe_file.h"
#include "lib/io/file_os.h"
#include "lib/io/safetensors.h"

namespace ork::io::tools {
namespace {

struct Entry {
  std::string name;
  std::vector<uint64_t> shape;
};

std::vector<Entry> entries(const SyntheticSpec& s) {
  const uint64_t h = s.hidden, f = s.ffn;
  std::vector<Entry> out = {{"model.embed_tokens.weight", {s.vocab, h}}};
  for (uint64_t l = 0; l < s.layers; ++l) {
    const std::string p = fmt::format("model.layers.{}.", l);
    out.push_back({p + "input_layernorm.weight", {h}});
    for (const char* m : {"q_proj", "k_proj", "v_proj", "o_proj"}) {
      out.push_back({p + "self_attn." + m + ".weight", {h, h}});
    }
    out.push_back({p + "post_attention_layernorm.weight", {h}});
    out.push_back({p + "mlp.gate_proj.weight", {f, h}});
    out.push_back({p + "mlp.up_proj.weight", {f, h}});
    out.push_back({p + "mlp.down_proj.weight", {h, f}});
  }
  out.push_back({"model.norm.weight", {h}});
  return out;
}

// The header JSON, padded with spaces so the data starts 8-byte aligned (as the reference
// writer does); the data is NOT aligned to any O_DIRECT block, on purpose.
std::string header_json(const SyntheticSpec& s, uint64_t* data_bytes) {
  nlohmann::ordered_json j;
  j["__metadata__"] = {{"format", "pt"}, {"generator", "ork_mksafetensors"},
                       {"seed", std::to_string(s.seed)}};
  const uint64_t esize = dtype_bytes(s.dtype);
  uint64_t pos = 0;
  for (const Entry& e : entries(s)) {
    uint64_t n = esize;
    for (uint64_t d : e.shape) n *= d;
    j[e.name] = {{"dtype", s.dtype}, {"shape", e.shape}, {"data_offsets", {pos, pos + n}}};
    pos += n;
  }
  *data_bytes = pos;
  std::string text = j.dump();
  text.resize((text.size() + 7) / 8 * 8, ' ');
  return text;
}

Status write_all(int fd, const char* p, size_t n, const std::string& path) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return make_error(-errno, fmt::format("write {}: {}", path, errno_text(-errno)));
    p += w;
    n -= static_cast<size_t>(w);
  }
  return {};
}

Status write_data(int fd, const SyntheticSpec& s, uint64_t data_bytes, const std::string& path) {
  constexpr uint64_t kBlockBytes = uint64_t{4} << 20;
  std::vector<uint64_t> block(kBlockBytes / 8);
  for (uint64_t pos = 0; pos < data_bytes; pos += kBlockBytes) {
    const uint64_t n = std::min(kBlockBytes, data_bytes - pos);
    for (uint64_t w = 0; w < (n + 7) / 8; ++w) block[w] = synthetic_word(s.seed, pos / 8 + w);
    Status st = write_all(fd, reinterpret_cast<const char*>(block.data()), n, path);
    if (!st) return st;
  }
  return {};
}

}  // namespace

uint64_t synthetic_word(uint64_t seed, uint64_t word) {
  uint64_t z = seed * 0x9E3779B97F4A7C15ULL + word * 0xBF58476D1CE4E5B9ULL + 0x632BE59BD9B4E5B1ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

Result<SyntheticSpec> spec_for_size(uint64_t total_bytes, uint64_t layers,
                                    const std::string& dtype, uint64_t seed) {
  const uint64_t esize = dtype_bytes(dtype);
  if (esize == 0) return make_error(-EINVAL, fmt::format("unknown dtype \"{}\"", dtype));
  if (layers == 0 || layers > kMaxSyntheticLayers)
    return make_error(-EINVAL, fmt::format("layers = {}: must be from 1 to {}", layers, kMaxSyntheticLayers));
  if (total_bytes > kMaxSyntheticBytes)
    return make_error(-EINVAL, fmt::format("{} bytes: at most {} (2^50)", total_bytes, kMaxSyntheticBytes));
  // Per layer ~ (4 + 3 * 8/3) h^2 = 12 h^2 elements; the layers take ~95% of the file and
  // the embeddings fill the rest, rounded up so the file is at least total_bytes.
  const double per_layer = double(total_bytes) * 0.95 / double(layers) / double(esize);
  uint64_t h = static_cast<uint64_t>(std::sqrt(per_layer / 12.0)) / 64 * 64;
  if (h < 64) {
    return make_error(-EINVAL, fmt::format("{} bytes for {} layers is too small: each layer "
                                           "needs >= {} bytes", total_bytes, layers,
                                           12 * 64 * 64 * esize));
  }
  SyntheticSpec s{.layers = layers, .hidden = h, .ffn = (8 * h / 3 + 63) / 64 * 64,
                  .vocab = 0, .dtype = dtype, .seed = seed};
  const uint64_t layer_bytes = (4 * h * h + 3 * s.ffn * h + 2 * h) * esize;
  const uint64_t rest = total_bytes > layers * layer_bytes ? total_bytes - layers * layer_bytes : 0;
  s.vocab = std::max<uint64_t>(1, (rest + h * esize - 1) / (h * esize));
  return s;
}

namespace {

// The spec's checks, and its data bytes in 128 bits (a spec from the command line can ask
// for more than 2^64: refused, never wrapped into a small file).
Result<uint64_t> checked_data_bytes(const SyntheticSpec& s) {
  const uint64_t esize = dtype_bytes(s.dtype);
  if (esize == 0) return make_error(-EINVAL, fmt::format("unknown dtype \"{}\"", s.dtype));
  if (s.hidden == 0 || s.ffn == 0 || s.vocab == 0) {
    return make_error(-EINVAL, "hidden, ffn and vocab must be >= 1");
  }
  if (s.layers > kMaxSyntheticLayers) {
    return make_error(-EINVAL, fmt::format("layers = {}: at most {}", s.layers, kMaxSyntheticLayers));
  }
  using u128 = unsigned __int128;
  const u128 h = s.hidden, f = s.ffn;
  const u128 bytes = (u128{s.vocab} * h + u128{s.layers} * (4 * h * h + 3 * f * h + 2 * h) + h) * esize;
  if (bytes > u128{kMaxSyntheticBytes}) {
    return make_error(-EINVAL, fmt::format("hidden {}, ffn {}, vocab {}, {} layers of {}: more than {} bytes",
                                           s.hidden, s.ffn, s.vocab, s.layers, s.dtype, kMaxSyntheticBytes));
  }
  return static_cast<uint64_t>(bytes);
}

}  // namespace

Result<uint64_t> synthetic_file_bytes(const SyntheticSpec& s) {
  auto checked = checked_data_bytes(s);
  if (!checked) return checked.error();
  uint64_t data_bytes = 0;
  const std::string header = header_json(s, &data_bytes);
  return 8 + header.size() + data_bytes;
}

Result<uint64_t> write_synthetic_safetensors(const std::string& path, const SyntheticSpec& s) {
  if (auto checked = checked_data_bytes(s); !checked) return checked.error();
  uint64_t data_bytes = 0;
  const std::string header = header_json(s, &data_bytes);
  // Beside the output, renamed over it when complete (driver/common/safe_file.h).
  auto out = OutputFile::create(path);
  if (!out) return out.error();
  const int fd = out->fd();
  unsigned char prefix[8];
  for (int i = 0; i < 8; ++i) prefix[i] = static_cast<unsigned char>(header.size() >> (8 * i));
  Status st = write_all(fd, reinterpret_cast<const char*>(prefix), 8, path);
  if (st) st = write_all(fd, header.data(), header.size(), path);
  if (st) st = write_data(fd, s, data_bytes, path);
  if (st) st = out->commit();  // fsync'd before the rename
  if (!st) return st.error();
  return 8 + header.size() + data_bytes;
}

}  // namespace ork::io::tools
