// Synthetic safetensors model files, for ork_stream's benchmark and ork_mksafetensors, and
// lib/io's tests (no model downloads exist here): the benchmark's, not the product's, so they
// live with the tools (docs/io.md). The layout mimics a Llama-style decoder: per layer two norms [hidden], four
// attention matrices [hidden, hidden] and three MLP matrices ([ffn, hidden] x2, [hidden,
// ffn]), named "model.layers.<n>.<...>", plus embeddings before the layers and a final norm
// after. Every data byte is a pure function of (seed, offset in the data), so a test can
// check any byte it reads without keeping a copy.
#pragma once

#include <cstdint>
#include <string>

#include "driver/common/result.h"

namespace ork::io::tools {

struct SyntheticSpec {
  uint64_t layers = 4;
  uint64_t hidden = 64;
  uint64_t ffn = 172;
  uint64_t vocab = 256;
  std::string dtype = "F16";
  uint64_t seed = 1;
};

// Bounds of a spec: the header of 10k layers is ~8 MB (under the format's 100 MB limit),
// and 2^50 bytes (1 PiB) is past any disk; both keep every size in 64 bits.
inline constexpr uint64_t kMaxSyntheticLayers = 10000;
inline constexpr uint64_t kMaxSyntheticBytes = uint64_t{1} << 50;

// A spec with `layers` layers whose file is at least `total_bytes` and larger by less than
// one embedding row plus the header (hidden a multiple of 64, ffn ~ 8/3 hidden, the
// embeddings sized to fill the rest).
Result<SyntheticSpec> spec_for_size(uint64_t total_bytes, uint64_t layers,
                                    const std::string& dtype = "F16", uint64_t seed = 1);

// The size of the file write_synthetic_safetensors would write (header included), or why
// the spec is refused; for a free-space check before writing.
Result<uint64_t> synthetic_file_bytes(const SyntheticSpec& spec);

// Writes the file (fsync'd, so a later POSIX_FADV_DONTNEED can drop its pages). Returns its
// size in bytes.
Result<uint64_t> write_synthetic_safetensors(const std::string& path, const SyntheticSpec& spec);

// The 8 data bytes at data offset 8*word (little-endian), from splitmix64 (Steele et al.).
uint64_t synthetic_word(uint64_t seed, uint64_t word);
inline uint8_t synthetic_byte(uint64_t seed, uint64_t data_offset) {
  return static_cast<uint8_t>(synthetic_word(seed, data_offset / 8) >> (8 * (data_offset % 8)));
}

}  // namespace ork::io::tools
