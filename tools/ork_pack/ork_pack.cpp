// ork_pack: packs a model once into the packed model file that ork_run streams
// (docs/execution.md). Either a real one (safetensors + model description JSON) or a
// synthetic one of real shapes. It opens no device (packing is host work). Exit codes as
// docs/tools.md: 0 written, 1 the write failed, 2 bad usage or input (nothing written).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lib/exec/pack_file.h"
#include "lib/exec/pack_safetensors.h"
#include "lib/exec/synthetic.h"
#include "tools/common/cli.h"
#include "tools/common/input_limits.h"
#include "tools/common/progress.h"

namespace {

using namespace ork;

constexpr uint64_t kMaxDescBytes = 16u << 20;  // a model description is a few KiB of JSON

int fail(const std::string& message, tools::Exit e = tools::Exit::bad_usage) {
  std::fprintf(stderr, "ork_pack: %s\n", message.c_str());
  return tools::code(e);
}

// A failed write (the disk, the file system) is a failed run, exit 1; anything else is the
// input's or the command line's, exit 2 (docs/tools.md "Conventions").
bool is_write_failure(int code) {
  return code == -EIO || code == -ENOSPC || code == -EFBIG || code == -EDQUOT || code == -EROFS;
}

int fail(const Error& e) {
  return fail(e.message, is_write_failure(e.code) ? tools::Exit::check_failed : tools::Exit::bad_usage);
}

struct Args {
  std::string input, desc_path, synthetic, dtype_text = "int8", out;
  int layers = 28;
  uint64_t seed = 1;
  bool json = false;
};

int run(const Args& a) {
  if (a.synthetic.empty() == a.input.empty())
    return fail("give either MODEL.safetensors with --desc, or --synthetic NAME");
  if (!a.synthetic.empty() && !a.desc_path.empty()) return fail("--desc goes with MODEL.safetensors, not --synthetic");
  // The output: a new path or a regular file, never an input (checked before an input is read).
  if (auto e = tools::check_not_an_input({"--out", a.out}, {{"MODEL", a.input}, {"--desc", a.desc_path}}); !e.empty())
    return fail(e);
  exec::ModelDesc desc;
  if (!a.synthetic.empty()) {
    auto dt = exec::parse_dtype(a.dtype_text);
    if (!dt) return fail(fmt::format("--dtype: {}", dt.error().message));
    auto d = exec::synthetic_desc(a.synthetic, a.layers, *dt);
    if (!d) return fail(d.error());
    desc = *d;
  } else {
    if (a.desc_path.empty()) return fail(fmt::format("{} needs --desc MODEL.json", a.input));
    std::string text;
    if (auto e = tools::read_file_bounded("--desc", a.desc_path, kMaxDescBytes, &text); !e.empty()) return fail(e);
    auto d = exec::parse_desc(text);
    if (!d) return fail(fmt::format("{}: {}", a.desc_path, d.error().message));
    desc = *d;
  }
  // The size of the file (int4: at most), checked against the free space before anything is written.
  const std::string what = a.synthetic.empty() ? a.input : fmt::format("--synthetic {} --layers {}", a.synthetic, desc.layers);
  auto bytes = a.synthetic.empty() ? exec::safetensors_pack_bytes(a.input, desc) : exec::packed_file_bytes(desc);
  if (!bytes) return fail(bytes.error().message);
  if (auto e = tools::check_disk(what, a.out, *bytes); !e.empty()) return fail(e);
  Status s;
  {
    tools::Progress p("packing", static_cast<int64_t>(desc.layers) * static_cast<int64_t>(desc.matmuls.size()), !a.json);
    auto tick = [&](int64_t done, int64_t) { p.update(done); };
    s = a.synthetic.empty() ? exec::pack_safetensors(a.input, desc, a.out, tick)
                            : exec::write_synthetic(a.out, desc, a.seed, tick);
    p.finish();
  }
  if (!s) return fail(s.error());  // the output is as it was: only the writer's temporary file is removed
  auto m = exec::read_packed(a.out);
  if (!m) return fail(m.error().message, tools::Exit::check_failed);  // we just wrote it: a failed run
  if (a.json) {
    nlohmann::json j = {{"out", a.out}, {"model", desc.name}, {"dtype", exec::dtype_key(desc.dtype)},
                        {"layers", desc.layers}, {"matmuls", desc.matmuls.size()},
                        {"weight_bytes", m->weight_bytes()}, {"file_bytes", m->file_bytes},
                        {"predicted_bytes", *bytes}};
    // int4: per matmul, the narrowest and widest K-slice width its layers' weights allowed.
    std::vector<std::pair<int64_t, int64_t>> widths(desc.matmuls.size(), {INT64_MAX, 0});
    for (const exec::PackedTensor& t : m->tensors) {
      auto& [lo, hi] = widths[static_cast<size_t>(t.matmul)];
      lo = std::min(lo, t.slice_k);
      hi = std::max(hi, t.slice_k);
    }
    for (size_t i = 0; i < widths.size() && desc.dtype == matmul::DType::int4; ++i)
      j["int4_slice_k"][desc.matmuls[i].name] = {widths[i].first, widths[i].second};
    std::printf("%s\n", j.dump().c_str());
  } else {
    std::printf("%s: %s %s, %d layers x %zu matmuls, %.2f GiB of weights (%llu bytes in the file)\n", a.out.c_str(),
                desc.name.c_str(), exec::dtype_key(desc.dtype), desc.layers, desc.matmuls.size(),
                static_cast<double>(m->weight_bytes()) / double(1 << 30), static_cast<unsigned long long>(m->file_bytes));
  }
  return tools::code(tools::Exit::ok);
}

}  // namespace

int main(int argc, char** argv) {
  return tools::run_main("ork_pack", [&] {
    CLI::App app{"Pack a model for streamed execution: ork_pack MODEL.safetensors --desc MODEL.json -o FILE, "
                 "or ork_pack --synthetic NAME --layers L [--dtype int8|int4|fp16] -o FILE"};
    tools::add_conventions(app, "ork_pack");
    Args a;
    app.add_option("model", a.input, "a safetensors file");
    app.add_option("--desc", a.desc_path, "the model description JSON (docs/execution.md)");
    app.add_option("--synthetic", a.synthetic, "a synthetic model: tiny, small, qwen2.5-1.5b or 7b");
    tools::add_number(app, "--layers", a.layers, "layers of the synthetic model", 1, 1024);
    app.add_option("--dtype", a.dtype_text, "dtype of the synthetic model: int8, int4 or fp16")->capture_default_str();
    tools::add_seed(app, a.seed, "seed of the synthetic weights");
    app.add_option("-o,--out", a.out, "the packed model file to write (never one of the inputs)")->required();
    tools::add_json(app, a.json);
    if (int rc = tools::parse_command_line(app, argc, argv); rc >= 0) return rc;
    return run(a);
  });
}
