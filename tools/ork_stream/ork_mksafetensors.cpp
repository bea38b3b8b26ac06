// ork_mksafetensors: writes a synthetic safetensors model of a chosen size and layer count
// (Llama-style tensor names, deterministic bytes; lib/io/synthetic.h) for tests and
// benchmarks. Exit 0 written, 1 write failed, 2 bad usage.
#include <cstdio>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lib/io/synthetic.h"
#include "tools/ork_stream/size_arg.h"

int main(int argc, char** argv) {
  using namespace ork::io;
  CLI::App app{"Write a synthetic safetensors model file (deterministic bytes, Llama-style "
               "names model.layers.<n>.*)"};
  std::string out, size_text = "64M", dtype = "F16";
  uint64_t layers = 8, seed = 1, hidden = 0, ffn = 0, vocab = 0;
  bool json = false;
  app.add_option("-o,--out", out, "output path")->required();
  app.add_option("-s,--size", size_text, "approximate file size (K/M/G suffixes)")->capture_default_str();
  app.add_option("-l,--layers", layers, "number of decoder layers")->capture_default_str();
  app.add_option("--dtype", dtype, "tensor dtype (F16, BF16, F32, U8, ...)")->capture_default_str();
  app.add_option("--seed", seed, "seed of the byte generator")->capture_default_str();
  app.add_option("--hidden", hidden, "hidden size (overrides --size; needs --ffn, --vocab)");
  app.add_option("--ffn", ffn, "MLP size");
  app.add_option("--vocab", vocab, "embedding rows");
  app.add_flag("--json", json, "print the result as JSON");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  SyntheticSpec spec;
  if (hidden != 0) {
    if (ffn == 0 || vocab == 0) {
      std::fprintf(stderr, "ork_mksafetensors: --hidden needs --ffn and --vocab\n");
      return 2;
    }
    spec = SyntheticSpec{.layers = layers, .hidden = hidden, .ffn = ffn, .vocab = vocab,
                         .dtype = dtype, .seed = seed};
  } else {
    auto size = tools::parse_size(size_text);
    auto s = size ? spec_for_size(size.value(), layers, dtype, seed) : size.error();
    if (!s) {
      std::fprintf(stderr, "ork_mksafetensors: %s\n", s.error().message.c_str());
      return 2;
    }
    spec = s.value();
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
