// fio as the baseline of the same run: sequential O_DIRECT io_uring reads of the same file
// with the same request size and depth as our io_uring source, and like it with registered
// buffers and files (--fixedbufs --registerfiles: fio's fastest and leanest io_uring mode
// on the reference VM, docs/io.md "Facts and sources"), so the ratio compares like with like.
#include <cstdio>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "driver/common/json.h"
#include "lib/io/file_os.h"
#include "tools/ork_stream/stream_bench.h"

namespace ork::io::tools {
namespace {

struct PipeCloser {
  void operator()(FILE* f) const { pclose(f); }
};

Result<std::string> capture(const std::string& command) {
  std::unique_ptr<FILE, PipeCloser> pipe(popen(command.c_str(), "r"));
  if (!pipe) return make_error(-errno, fmt::format("popen \"{}\" failed", command));
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, pipe.get())) > 0) out.append(buf, n);
  return out;
}

std::string quoted(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

}  // namespace

Result<std::optional<FioResult>> run_fio(const std::string& path, uint64_t bs_bytes,
                                         unsigned iodepth) {
  auto where = capture("command -v fio 2>/dev/null");
  if (!where || where->empty()) return std::optional<FioResult>{};
  uint64_t size = 0;
  {
    FileOs& os = real_file_os();
    const int fd = os.open(path.c_str(), 0);
    if (fd < 0) return make_error(fd, fmt::format("open {}: {}", path, errno_text(fd)));
    os.file_size(fd, &size);
    os.close(fd);
  }
  size = size / bs_bytes * bs_bytes;  // whole requests only: O_DIRECT needs aligned lengths
  FioResult r;
  r.command = fmt::format("fio --name=seqread --filename={} --readonly --rw=read --direct=1 "
                          "--ioengine=io_uring --fixedbufs=1 --registerfiles=1 --bs={} "
                          "--iodepth={} --size={} --output-format=json",
                          quoted(path), bs_bytes, iodepth, size);
  auto out = capture(r.command + " 2>&1");
  if (!out) return out.error();
  const auto brace = out->find('{');  // fio may print notes before the JSON
  auto parsed = parse_json_bounded(brace == std::string::npos ? std::string() : out->substr(brace), "fio's output");
  nlohmann::json doc = parsed ? *parsed : nlohmann::json();
  if (!doc.is_object() || !doc.contains("jobs") || !doc["jobs"].is_array() || doc["jobs"].empty()) {
    return make_error(-EIO, fmt::format("fio gave no JSON result: {}", out->substr(0, 300)));
  }
  const double bw = doc["jobs"][0]["read"].value("bw_bytes", 0.0);
  if (bw <= 0) return make_error(-EIO, "fio reported 0 bytes/s");
  r.gbps = bw / 1e9;
  return std::optional<FioResult>(r);
}

}  // namespace ork::io::tools
