// ork_mksafetensors: writes a synthetic safetensors model of a chosen size and layer count
// (Llama-style tensor names, deterministic bytes; tools/ork_stream/synthetic_safetensors.h) for tests and
// benchmarks. Exit 0 written, 1 write failed, 2 bad usage or not enough free space.
#include <cstdio>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tools/common/cli.h"
#include "tools/common/input_limits.h"
#include "tools/common/size_arg.h"
#include "tools/ork_stream/synthetic_safetensors.h"

namespace {

using namespace ork::io;
using namespace ork::io::tools;

struct Args {
  std::string out, size_text = "64M", dtype = "F16";
  uint64_t layers = 8, seed = 1, hidden = 0, ffn = 0, vocab = 0;
  bool json = false;
};

// -1 to go on, else the exit code (--help, a bad flag).
int parse_args(int argc, char** argv, Args& a) {
  using ork::tools::add_number;
  CLI::App app{"Write a synthetic safetensors model file (deterministic bytes, Llama-style "
               "names model.layers.<n>.*). Exit 0 written, 1 write failed, 2 bad usage (or not "
               "enough free space: checked first)."};
  ork::tools::add_conventions(app, "ork_mksafetensors");
  app.add_option("-o,--out", a.out, "output path")->required();
  app.add_option("-s,--size", a.size_text, "approximate file size (K/M/G/T suffixes)");
  add_number(app, "-l,--layers", a.layers, "number of decoder layers", uint64_t{1}, kMaxSyntheticLayers);
  app.add_option("--dtype", a.dtype, "tensor dtype (F16, BF16, F32, U8, ...)");
  ork::tools::add_seed(app, a.seed, "seed of the byte generator");
  add_number(app, "--hidden", a.hidden, "hidden size (overrides --size; needs --ffn, --vocab); 0 = from --size",
             uint64_t{0}, uint64_t{1} << 20);
  add_number(app, "--ffn", a.ffn, "MLP size", uint64_t{0}, uint64_t{1} << 20);
  add_number(app, "--vocab", a.vocab, "embedding rows", uint64_t{0}, uint64_t{1} << 24);
  ork::tools::add_json(app, a.json);
  return ork::tools::parse_command_line(app, argc, argv);
}

// The model's shapes from --hidden/--ffn/--vocab, or fitted to --size; `asked` gets the
// flags that set the size, for the free-space message. -1 to go on, else the exit code.
int make_spec(const Args& a, SyntheticSpec& spec, std::string& asked) {
  if (a.hidden != 0) {
    if (a.ffn == 0 || a.vocab == 0) {
      std::fprintf(stderr, "ork_mksafetensors: --hidden needs --ffn and --vocab\n");
      return 2;
    }
    spec = SyntheticSpec{.layers = a.layers, .hidden = a.hidden, .ffn = a.ffn, .vocab = a.vocab,
                         .dtype = a.dtype, .seed = a.seed};
    asked = fmt::format("--hidden {} --ffn {} --vocab {} --layers {}", a.hidden, a.ffn, a.vocab, a.layers);
    return -1;
  }
  auto size = tools::parse_size(a.size_text);
  auto s = size ? spec_for_size(size.value(), a.layers, a.dtype, a.seed) : size.error();
  if (!s) {
    std::fprintf(stderr, "ork_mksafetensors: --size %s: %s\n", a.size_text.c_str(), s.error().message.c_str());
    return 2;
  }
  spec = s.value();
  asked = "--size " + a.size_text;
  return -1;
}

int run(int argc, char** argv) {
  Args a;
  if (int rc = parse_args(argc, argv, a); rc >= 0) return rc;
  SyntheticSpec spec;
  std::string asked;
  if (int rc = make_spec(a, spec, asked); rc >= 0) return rc;
  auto bytes = synthetic_file_bytes(spec);
  if (!bytes) {
    std::fprintf(stderr, "ork_mksafetensors: %s\n", bytes.error().message.c_str());
    return 2;
  }
  // Free space first: a typo (--size 100T) must not fill the disk and then fail.
  if (const std::string e = ork::tools::check_disk(asked, a.out, bytes.value()); !e.empty()) {
    std::fprintf(stderr, "ork_mksafetensors: %s\n", e.c_str());
    return 2;
  }
  auto written = write_synthetic_safetensors(a.out, spec);
  if (!written) {
    std::fprintf(stderr, "ork_mksafetensors: %s\n", written.error().message.c_str());
    return written.error().code == -EINVAL ? 2 : 1;
  }
  if (a.json) {
    const nlohmann::json j = {{"path", a.out}, {"bytes", written.value()}, {"layers", spec.layers},
                              {"hidden", spec.hidden}, {"ffn", spec.ffn}, {"vocab", spec.vocab},
                              {"dtype", spec.dtype}, {"seed", spec.seed}};
    std::puts(j.dump(2).c_str());
  } else {
    fmt::print("{}: {} ({} bytes), {} layers, hidden {}, ffn {}, vocab {}, {}\n", a.out,
               tools::format_bytes(written.value()), written.value(), spec.layers, spec.hidden,
               spec.ffn, spec.vocab, spec.dtype);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return ork::tools::run_main("ork_mksafetensors", [&] { return run(argc, argv); });
}
