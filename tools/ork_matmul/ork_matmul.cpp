// ork_matmul: C = A x B from .npy files through libork, for scripts and cross-checks with
// numpy. --dtype int8 (default): A, B int8, C int32. fp16: A, B '<f2' (or '<f4', rounded to
// fp16, nearest even), C '<f4' or, with --out-dtype fp16, '<f2'. int4 (W4A4) / w4a8: int4
// values -8..7 in int8 .npy files (numpy has no int4; the tool packs them two per byte,
// low nibble first), A int8 for w4a8; C int32.
// With --quant w8a8|w4a8|w4a4: A and B are fp32 ('<f4'), quantised by libork (B per-channel
// or per --group 32/64/128, A per tensor or --per-row), C is fp32 (docs/quantisation.md).
// Exit 0 ok, 1 when the device or the job failed, 2 on bad usage or bad input files, 3 when
// the device is unavailable.
#include <bit>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "driver/common/fp16.h"
#include "driver/common/int4.h"
#include "tools/common/cli.h"
#include "tools/common/input_limits.h"
#include "tools/common/npy.h"
#include "tools/common/ork_handles.h"

namespace ork::tools {
namespace {

// .npy '<i4' is little-endian and C is written as the bytes libork returns.
static_assert(std::endian::native == std::endian::little, "ork_matmul assumes a little-endian host");

struct Args {
  std::string a_path, b_path, out_path, device;
  std::string dtype = "int8", out_dtype;
  int cores = 0;
  int mc_cap = 0;
  std::string quant;  // "" = plain int8; else w8a8, w4a8, w4a4
  int group = 0;
  bool per_row = false;
  bool quiet = false;
  bool json = false;
};

struct Timing {
  double open_ms = 0, weights_ms = 0, matmul_ms = 0;
};

int fail(Exit exit, const std::string& message) {
  fmt::print(stderr, "ork_matmul: {}\n", message);
  return code(exit);
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// Errors in the inputs themselves: shapes that cannot multiply, empty matrices.
Status check_shapes(const Args& args, const NpyMatrix& a, const NpyMatrix& b) {
  if (a.rows == 0 || a.cols == 0)
    return make_error(-EINVAL, fmt::format("{}: empty matrix ({} x {}): A needs M >= 1 and "
                                           "K >= 1", args.a_path, a.rows, a.cols));
  if (b.rows == 0 || b.cols == 0)
    return make_error(-EINVAL, fmt::format("{}: empty matrix ({} x {}): B needs K >= 1 and "
                                           "N >= 1", args.b_path, b.rows, b.cols));
  if (a.cols != b.rows)
    return make_error(-EINVAL, fmt::format("K mismatch: {} is {} x {} (M x K) but {} is {} x {} "
                                           "(K x N): A's columns must equal B's rows",
                                           args.a_path, a.rows, a.cols, args.b_path, b.rows,
                                           b.cols));
  return Status::success();
}

// What goes to libork: the bytes of A and B in the C API's formats, and the dtypes.
struct Operands {
  std::vector<uint8_t> a, b;
  ork_dtype w_dtype = ORK_DTYPE_INT8;
  int32_t a_dtype = 0, c_dtype = 0;
  NpyDtype out = NpyDtype::int32;
};

// fp16 operands from '<f2' as they are, or from '<f4' rounded to nearest even.
Result<NpyMatrix> read_fp16(const std::string& path) {
  Result<NpyMatrix> h = npy_read_matrix(path, NpyDtype::fp16);
  if (h) return h;
  Result<NpyMatrix> f = npy_read_matrix(path, NpyDtype::fp32);
  if (!f) return make_error(-EINVAL, fmt::format("{} (fp16 needs '<f2' or '<f4')", h.error().message));
  NpyMatrix out = *f;
  out.dtype = NpyDtype::fp16;
  out.bytes.resize(f->bytes.size() / 2);
  for (size_t i = 0; i < f->bytes.size() / 4; ++i) {
    float v;
    std::memcpy(&v, f->bytes.data() + 4 * i, 4);
    const uint16_t half = ork::float_to_half(v);
    std::memcpy(out.bytes.data() + 2 * i, &half, 2);
  }
  return out;
}

// int4 values (-8..7, in int8) packed two per byte (driver/common/int4.h).
Result<std::vector<uint8_t>> pack_int4(const std::string& path, const NpyMatrix& m) {
  std::vector<uint8_t> out((m.bytes.size() + 1) / 2, 0);
  for (size_t i = 0; i < m.bytes.size(); ++i) {
    const int8_t v = static_cast<int8_t>(m.bytes[i]);
    if (v < -8 || v > 7)
      return make_error(-EINVAL, fmt::format("{}: [{}][{}] = {}: int4 values must be in -8..7", path,
                                             static_cast<int64_t>(i) / m.cols, static_cast<int64_t>(i) % m.cols, v));
    int4::put(out.data(), static_cast<int64_t>(i), v);
  }
  return out;
}

Result<Operands> operands(const Args& args, const NpyMatrix& a, const NpyMatrix& b) {
  Operands o;
  if (args.dtype == "fp16") {
    o.w_dtype = ORK_DTYPE_FP16;
    o.a = a.bytes;
    o.b = b.bytes;
    o.c_dtype = args.out_dtype == "fp16" ? ORK_DTYPE_FP16 : ORK_DTYPE_FP32;
    o.out = args.out_dtype == "fp16" ? NpyDtype::fp16 : NpyDtype::fp32;
    return o;
  }
  if (args.dtype == "int8") {
    o.a = a.bytes;
    o.b = b.bytes;
    return o;
  }
  o.w_dtype = ORK_DTYPE_INT4;
  auto pb = pack_int4(args.b_path, b);
  if (!pb) return pb.error();
  o.b = std::move(*pb);
  if (args.dtype == "w4a8") {
    o.a_dtype = ORK_DTYPE_INT8;
    o.a = a.bytes;
    return o;
  }
  auto pa = pack_int4(args.a_path, a);
  if (!pa) return pa.error();
  o.a = std::move(*pa);
  return o;
}

// Opens the device the arguments name and reads its info. On failure prints libork's
// message and sets `exit_code` (2 for a bad device name, 1 when it cannot open).
DevicePtr open_device(const Args& args, ork_device_info& info, Timing& t, int& exit_code) {
  const auto t0 = std::chrono::steady_clock::now();
  ork_device* raw = nullptr;
  ork_status st = ork_device_open(args.device.empty() ? nullptr : args.device.c_str(), &raw);
  DevicePtr device(raw);
  if (st == ORK_OK) st = ork_device_get_info(device.get(), &info);
  t.open_ms = ms_since(t0);
  exit_code = -1;
  if (st != ORK_OK) {
    fmt::print(stderr, "ork_matmul: device {}: {}\n", device_label(args.device), describe_failure(st));
    exit_code = code(st == ORK_E_INVALID_ARGUMENT ? Exit::bad_usage
                     : st == ORK_E_NO_DEVICE          ? Exit::device_unavailable
                                                      : Exit::check_failed);
    device.reset();
  }
  return device;
}

// Runs the matmul on the device; on failure prints libork's message and returns the exit code.
int multiply(const Args& args, const NpyMatrix& a, const NpyMatrix& b, const Operands& ops,
             std::vector<uint8_t>& c, ork_device_info& info, Timing& t) {
  int rc = -1;
  DevicePtr device = open_device(args, info, t, rc);
  if (!device) return rc;
  auto t0 = std::chrono::steady_clock::now();
  ork_weights* raw_w = nullptr;
  ork_status st = ork_weights_create(device.get(), ops.w_dtype, b.rows, b.cols, ops.b.data(), &raw_w);
  WeightsPtr weights(raw_w);
  t.weights_ms = ms_since(t0);
  if (st != ORK_OK) {
    fmt::print(stderr, "ork_matmul: weights from {}: {}\n", args.b_path, describe_failure(st));
    return code(st == ORK_E_INVALID_ARGUMENT ? Exit::bad_usage : Exit::check_failed);
  }
  ork_matmul_options options{};
  options.struct_size = sizeof(options);
  options.cores = args.cores;
  options.mc_cap = args.mc_cap;
  options.a_dtype = ops.a_dtype;
  options.c_dtype = ops.c_dtype;
  c.assign(static_cast<size_t>(a.rows * b.cols * npy_itemsize(ops.out)), 0);
  t0 = std::chrono::steady_clock::now();
  st = ork_matmul(device.get(), weights.get(), ops.a.data(), a.rows, c.data(), &options);
  t.matmul_ms = ms_since(t0);
  if (st != ORK_OK) {
    fmt::print(stderr, "ork_matmul: matmul: {}\n", describe_failure(st));
    return code(st == ORK_E_INVALID_ARGUMENT ? Exit::bad_usage : Exit::check_failed);
  }
  return code(Exit::ok);
}

// The quantised matmul: fp32 B quantised once, fp32 A per call, fp32 C.
int multiply_quant(const Args& args, const NpyMatrix& a, const NpyMatrix& b, std::vector<float>& c,
                   ork_device_info& info, Timing& t) {
  const int wbits = args.quant == "w8a8" ? 8 : 4, abits = args.quant == "w4a4" ? 4 : 8;
  int rc = -1;
  DevicePtr device = open_device(args, info, t, rc);
  if (!device) return rc;
  auto t0 = std::chrono::steady_clock::now();
  ork_quant_options qo{sizeof(qo), wbits, args.group};
  ork_qweights* q = nullptr;
  ork_status st = ork_qweights_create(device.get(), reinterpret_cast<const float*>(b.bytes.data()), b.rows, b.cols, &qo, &q);
  std::unique_ptr<ork_qweights, decltype(&ork_qweights_destroy)> weights(q, &ork_qweights_destroy);
  t.weights_ms = ms_since(t0);
  if (st != ORK_OK) {
    fmt::print(stderr, "ork_matmul: weights from {}: {}\n", args.b_path, describe_failure(st));
    return code(st == ORK_E_INVALID_ARGUMENT ? Exit::bad_usage : Exit::check_failed);
  }
  ork_qmatmul_options mo{sizeof(mo), abits, args.per_row ? 1 : 0, args.cores};
  c.assign(static_cast<size_t>(a.rows * b.cols), 0.0f);
  t0 = std::chrono::steady_clock::now();
  st = ork_qmatmul(device.get(), weights.get(), reinterpret_cast<const float*>(a.bytes.data()), a.rows, c.data(), &mo);
  t.matmul_ms = ms_since(t0);
  if (st != ORK_OK) {
    fmt::print(stderr, "ork_matmul: matmul: {}\n", describe_failure(st));
    return code(st == ORK_E_INVALID_ARGUMENT ? Exit::bad_usage : Exit::check_failed);
  }
  return code(Exit::ok);
}

void report(const Args& args, const NpyMatrix& a, const NpyMatrix& b,
            const ork_device_info& info, const Timing& t) {
  const std::string cores = args.cores ? fmt::format("{}", args.cores)
                                       : fmt::format("{} (all)", info.cores);
  if (!args.quiet) {
    fmt::print(stderr,
               "ork_matmul: C[{} x {}] {} = A[{} x {}] x B[{} x {}] {} on {}{} ({}{}), "
               "cores {}, matmul {:.3f} ms (open {:.3f} ms, weights {:.3f} ms) -> {}\n",
               a.rows, b.cols, !args.quant.empty() ? "fp32" : args.dtype != "fp16" ? "int32" : args.out_dtype == "fp16" ? "fp16" : "fp32",
               a.rows, a.cols, b.rows, b.cols,
               args.quant.empty() ? args.dtype : fmt::format("fp32 as {} group {}", args.quant, args.group),
               device_label(args.device),
               info.emulated ? " [emulated]" : "", info.backend,
               info.kernel_interface[0] ? fmt::format(" via {}", info.kernel_interface) : "",
               cores, t.matmul_ms, t.open_ms, t.weights_ms, args.out_path);
  }
  if (args.json) {
    nlohmann::json j = {{"m", a.rows}, {"k", a.cols}, {"n", b.cols}, {"dtype", args.dtype},
                        {"device", device_label(args.device)}, {"backend", info.backend},
                        {"kernel_interface", info.kernel_interface},
                        {"emulated", info.emulated != 0}, {"cores", args.cores},
                        {"device_cores", info.cores}, {"mc_cap", args.mc_cap},
                        {"quant", args.quant}, {"group", args.group}, {"per_row", args.per_row},
                        {"open_ms", t.open_ms}, {"weights_ms", t.weights_ms},
                        {"matmul_ms", t.matmul_ms}, {"out", args.out_path}};
    fmt::print("{}\n", j.dump(2));
  }
}

int run_quant(const Args& args) {
  Result<NpyMatrix> a = npy_read_matrix(args.a_path, NpyDtype::fp32);
  if (!a) return fail(Exit::bad_usage, a.error().message);
  Result<NpyMatrix> b = npy_read_matrix(args.b_path, NpyDtype::fp32);
  if (!b) return fail(Exit::bad_usage, b.error().message);
  if (Status s = check_shapes(args, *a, *b); !s) return fail(Exit::bad_usage, s.error().message);
  std::vector<float> c;
  ork_device_info info{};
  Timing timing;
  if (int rc = multiply_quant(args, *a, *b, c, info, timing); rc != 0) return rc;
  auto c_bytes = std::as_bytes(std::span<const float>(c));
  Status written = npy_write_matrix(args.out_path, NpyDtype::fp32, a->rows, b->cols,
                                    {reinterpret_cast<const uint8_t*>(c_bytes.data()), c_bytes.size()});
  if (!written) return fail(Exit::check_failed, written.error().message);
  report(args, *a, *b, info, timing);
  return code(Exit::ok);
}

int run(int argc, char** argv) {
  CLI::App app{"ork_matmul: C = A x B through libork.\n"
               "A: M x K .npy, B: K x N .npy (C order); C: M x N .npy. By --dtype:\n"
               "  int8: A, B '|i1' -> C '<i4'.  fp16: A, B '<f2' or '<f4' -> C '<f4' ('<f2' with --out-dtype fp16).\n"
               "  int4 (W4A4): A, B '|i1' holding -8..7 -> C '<i4'.  w4a8: A '|i1', B '|i1' holding -8..7 -> C '<i4'.\n"
               "--quant w8a8|w4a8|w4a4: A, B and C are fp32 .npy, quantised by libork.\n"
               "Exit 0 ok, 1 device or job failure, 2 bad usage or bad input files, 3 device unavailable."};
  add_conventions(app, "ork_matmul");
  Args args;
  app.add_option("--a", args.a_path, "A: M x K .npy (C order)")->required();
  app.add_option("--b", args.b_path, "B: K x N .npy (C order)")->required();
  app.add_option("--out,-o", args.out_path, "C: M x N .npy to write (never one of the inputs)")->required();
  app.add_option("--dtype", args.dtype, "int8, fp16, int4 (W4A4), w4a8")
      ->check(CLI::IsMember({"int8", "fp16", "int4", "w4a8"}));
  app.add_option("--out-dtype", args.out_dtype, "fp16 only: fp32 (default) or fp16")
      ->check(CLI::IsMember({"fp32", "fp16"}));
  add_device(app, args.device);
  add_cores(app, args.cores);
  add_number(app, "--mc-cap", args.mc_cap, "cap on rows per M-tile; 0 = the bank limit", 0, 1 << 24);
  app.add_option("--quant", args.quant, "quantised fp32 matmul: w8a8, w4a8 or w4a4 (A, B, C are fp32 .npy)")
      ->check(CLI::IsMember({"w8a8", "w4a8", "w4a4"}));
  app.add_option("--group", args.group, "with --quant: weight scales per group of 32, 64 or 128 along K; 0 = "
                                        "per output column")
      ->check(CLI::IsMember({0, 32, 64, 128}));
  app.add_flag("--per-row", args.per_row, "with --quant: one activation scale per row of A");
  app.add_flag("--quiet,-q", args.quiet, "print nothing on success");
  add_json(app, args.json);
  if (int rc = parse_command_line(app, argc, argv); rc >= 0) return rc;
  // By identity (device and inode), not by name: "./a.npy", a hard link or a symlink to A
  // are A too. Checked before anything is read or written.
  if (const std::string e = check_not_an_input({"--out", args.out_path}, {{"--a", args.a_path}, {"--b", args.b_path}});
      !e.empty())
    return fail(Exit::bad_usage, e);
  if (args.quant.empty() && (args.group != 0 || args.per_row))
    return fail(Exit::bad_usage, "--group and --per-row need --quant");
  if (!args.quant.empty()) return run_quant(args);

  if (!args.out_dtype.empty() && args.dtype != "fp16")
    return fail(Exit::bad_usage, fmt::format("--out-dtype {} needs --dtype fp16 (--dtype {} writes int32)",
                                             args.out_dtype, args.dtype));
  const bool fp16 = args.dtype == "fp16";
  Result<NpyMatrix> a = fp16 ? read_fp16(args.a_path) : npy_read_matrix(args.a_path, NpyDtype::int8);
  if (!a) return fail(Exit::bad_usage, a.error().message);
  Result<NpyMatrix> b = fp16 ? read_fp16(args.b_path) : npy_read_matrix(args.b_path, NpyDtype::int8);
  if (!b) return fail(Exit::bad_usage, b.error().message);
  if (Status s = check_shapes(args, *a, *b); !s)
    return fail(Exit::bad_usage, s.error().message);
  Result<Operands> ops = operands(args, *a, *b);
  if (!ops) return fail(Exit::bad_usage, ops.error().message);

  std::vector<uint8_t> c;
  ork_device_info info{};
  Timing timing;
  if (int rc = multiply(args, *a, *b, *ops, c, info, timing); rc != 0) return rc;
  Status written = npy_write_matrix(args.out_path, ops->out, a->rows, b->cols, c);
  if (!written) return fail(Exit::check_failed, written.error().message);
  report(args, *a, *b, info, timing);
  return code(Exit::ok);
}

}  // namespace
}  // namespace ork::tools

int main(int argc, char** argv) {
  return ork::tools::run_main("ork_matmul", [&] { return ork::tools::run(argc, argv); });
}
