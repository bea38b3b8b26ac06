// ork_mksafetensors: writes a synthetic safetensors model of a chosen size and layer count
// (Llama-style tensor names, deterministic bytes; lib/io/synthetic.h) for tests and
// benchmarks. Exit 0 written, 1 write failed, 2 bad usage or not enough free space.
#include <cstdio>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lib/io/synthetic.h"
#include "tools/common/cli.h"
#include "tools/common/input_limits.h"
#include "tools/common/size_arg.h"

namespace {

int run(int argc, char** argv) {
  using namespace ork::io;
  using ork::tools::add_number;
  CLI::App app{"Write a synthetic safetensors model file (deterministic bytes, Llama-style "
               "names model.layers.<n>.*). Exit 0 written, 1 write failed, 2 bad usage (or not "
               "enough free space: checked first)."};
  ork::tools::add_conventions(app, "ork_mksafetensors");
  std::string out, size_text = "64M", dtype = "F16";
  uint64_t layers = 8, seed = 1, hidden = 0, ffn = 0, vocab = 0;
  bool json = false;
  app.add_option("-o,--out", out, "output path")->required();
  app.add_option("-s,--size", size_text, "approximate file size (K/M/G/T suffixes)");
  add_number(app, "-l,--layers", layers, "number of decoder layers", uint64_t{1}, kMaxSyntheticLayers);
  app.add_option("--dtype", dtype, "tensor dtype (F16, BF16, F32, U8, ...)");
  ork::tools::add_seed(app, seed, "seed of the byte generator");
  add_number(app, "--hidden", hidden, "hidden size (overrides --size; needs --ffn, --vocab); 0 = from --size",
             uint64_t{0}, uint64_t{1} << 20);
  add_number(app, "--ffn", ffn, "MLP size", uint64_t{0}, uint64_t{1} << 20);
  add_number(app, "--vocab", vocab, "embedding rows", uint64_t{0}, uint64_t{1} << 24);
  ork::tools::add_json(app, json);
  if (int rc = ork::tools::parse_command_line(app, argc, argv); rc >= 0) return rc;
  SyntheticSpec spec;
  std::string asked;  // the flags that set the size, for the free-space message
  if (hidden != 0) {
    if (ffn == 0 || vocab == 0) {
      std::fprintf(stderr, "ork_mksafetensors: --hidden needs --ffn and --vocab\n");
      return 2;
    }
    spec = SyntheticSpec{.layers = layers, .hidden = hidden, .ffn = ffn, .vocab = vocab,
                         .dtype = dtype, .seed = seed};
    asked = fmt::format("--hidden {} --ffn {} --vocab {} --layers {}", hidden, ffn, vocab, layers);
  } else {
    auto size = tools::parse_size(size_text);
    auto s = size ? spec_for_size(size.value(), layers, dtype, seed) : size.error();
    if (!s) {
      std::fprintf(stderr, "ork_mksafetensors: --size %s: %s\n", size_text.c_str(), s.error().message.c_str());
      return 2;
    }
    spec = s.value();
    asked = "--size " + size_text;
  }
  auto bytes = synthetic_file_bytes(spec);
  if (!bytes) {
    std::fprintf(stderr, "ork_mksafetensors: %s\n", bytes.error().message.c_str());
    return 2;
  }
  // Free space first: a typo (--size 100T) must not fill the disk and then fail.
  if (const std::string e = ork::tools::check_disk(asked, out, bytes.value()); !e.empty()) {
    std::fprintf(stderr, "ork_mksafetensors: %s\n", e.c_str());
    return 2;
  }
  auto written = write_synthetic_safetensors(out, spec);
  if (!written) {
    std::fprintf(stderr, "ork_mksafetensors: %s\n", written.error().message.c_str());
    return written.error().code == -EINVAL ? 2 : 1;
  }
  if (json) {
    const nlohmann::json j = {{"path", out}, {"bytes", written.value()}, {"layers", spec.layers},
                              {"hidden", spec.hidden}, {"ffn", spec.ffn}, {"vocab", spec.vocab},
                              {"dtype", spec.dtype}, {"seed", spec.seed}};
    std::puts(j.dump(2).c_str());
  } else {
    fmt::print("{}: {} ({} bytes), {} layers, hidden {}, ffn {}, vocab {}, {}\n", out,
               tools::format_bytes(written.value()), written.value(), spec.layers, spec.hidden,
               spec.ffn, spec.vocab, spec.dtype);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return ork::tools::run_main("ork_mksafetensors", [&] { return run(argc, argv); });
}
