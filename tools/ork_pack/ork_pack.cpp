// ork_pack: packs a model once into the packed model file that ork_run streams
// (docs/execution.md). Either a real one (safetensors + model description JSON) or a
// synthetic one of real shapes. Exit 0 written, 1 write failed, 2 bad usage or input.
#include <cstdio>
#include <fstream>
#include <sstream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "lib/exec/pack_file.h"
#include "lib/exec/pack_safetensors.h"
#include "lib/exec/synthetic.h"
#include "tools/common/cli.h"
#include "tools/common/progress.h"

namespace {

int fail(const ork::Error& e) {
  std::fprintf(stderr, "ork_pack: %s\n", e.message.c_str());
  return e.code == -EIO || e.code == -ENOSPC ? 1 : 2;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace ork;
  CLI::App app{"Pack a model for streamed execution: ork_pack MODEL.safetensors --desc MODEL.json -o FILE, "
               "or ork_pack --synthetic NAME --layers L [--dtype int8|int4|fp16] -o FILE"};
  std::string input, desc_path, synthetic, dtype_text = "int8", out;
  int layers = 0;
  uint64_t seed = 1;
  app.add_option("model", input, "a safetensors file");
  app.add_option("--desc", desc_path, "the model description JSON (docs/execution.md)");
  app.add_option("--synthetic", synthetic, "a synthetic model: tiny, small, qwen2.5-1.5b or 7b");
  app.add_option("--layers", layers, "layers of the synthetic model (default: 28)");
  app.add_option("--dtype", dtype_text, "dtype of the synthetic model: int8, int4 or fp16")->capture_default_str();
  app.add_option("--seed", seed, "seed of the synthetic weights")->capture_default_str();
  app.add_option("-o,--out", out, "the packed model file to write")->required();
  if (int rc = tools::parse_command_line(app, argc, argv); rc >= 0) return rc;
  if (synthetic.empty() == input.empty()) {
    std::fprintf(stderr, "ork_pack: give either MODEL.safetensors with --desc, or --synthetic NAME\n");
    return 2;
  }
  Status s;
  exec::ModelDesc desc;
  if (!synthetic.empty()) {
    auto dt = exec::parse_dtype(dtype_text);
    if (!dt) return fail(dt.error());
    auto d = exec::synthetic_desc(synthetic, layers == 0 ? 28 : layers, *dt);
    if (!d) return fail(d.error());
    desc = *d;
    tools::Progress p("packing", static_cast<int64_t>(desc.layers) * 7, true);
    s = exec::write_synthetic(out, desc, seed, [&](int64_t done, int64_t) { p.update(done); });
    p.finish();
  } else {
    if (desc_path.empty()) {
      std::fprintf(stderr, "ork_pack: %s needs --desc MODEL.json\n", input.c_str());
      return 2;
    }
    std::ifstream f(desc_path);
    if (!f) {
      std::fprintf(stderr, "ork_pack: cannot read %s\n", desc_path.c_str());
      return 2;
    }
    std::stringstream text;
    text << f.rdbuf();
    auto d = exec::parse_desc(text.str());
    if (!d) return fail(Error{-EINVAL, fmt::format("{}: {}", desc_path, d.error().message)});
    desc = *d;
    tools::Progress p("packing", static_cast<int64_t>(desc.layers * desc.matmuls.size()), true);
    s = exec::pack_safetensors(input, desc, out, [&](int64_t done, int64_t) { p.update(done); });
    p.finish();
  }
  if (!s) {
    std::remove(out.c_str());
    return fail(s.error());
  }
  auto m = exec::read_packed(out);
  if (!m) return fail(m.error());
  std::printf("%s: %s %s, %d layers x %zu matmuls, %.2f GiB of weights (%llu bytes in the file)\n", out.c_str(),
              desc.name.c_str(), exec::dtype_key(desc.dtype), desc.layers, desc.matmuls.size(),
              static_cast<double>(m->weight_bytes()) / double(1 << 30), static_cast<unsigned long long>(m->file_bytes));
  return 0;
}
