// ork_regdump: a regcmd buffer file (raw little-endian u64 entries, e.g. a BO dump or an
// intercept capture) printed as named register writes, by the same decoder and register
// description the emulator uses. --check turns unknown registers and wrong targets into a
// failed check (exit 1); --json for scripts.
#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <vector>

#include "driver/regcmd/regcmd.h"
#include "tools/common/cli.h"
#include "tools/common/input_limits.h"

namespace {

using ork::regcmd::NamedWrite;
using ork::tools::Exit;

// A problem --check reports: an entry the description does not know, or whose target is
// not its register's block.
std::string problem_of(const NamedWrite& w) {
  const auto& e = w.entry;
  if (w.raw == ork::regcmd::kPadding || e.target == ork::regcmd::kTargetTrailerMarker) return {};
  if (ork::regs::block_for_target(e.target) == nullptr) return fmt::format("unknown target 0x{:04x}", e.target);
  if (w.reg == nullptr) return fmt::format("register 0x{:04x} is not in the description for target 0x{:04x}", e.reg, e.target);
  return {};
}

const char* kind_of(const NamedWrite& w) {
  if (w.raw == ork::regcmd::kPadding) return "padding";
  if (w.entry.target == ork::regcmd::kTargetTrailerMarker) return "trailer_marker";
  return w.reg == nullptr ? "unknown" : "write";
}

nlohmann::json to_json(size_t index, const NamedWrite& w) {
  nlohmann::json j = {{"index", index}, {"raw", fmt::format("0x{:016x}", w.raw)}, {"kind", kind_of(w)},
                      {"target", w.entry.target}, {"reg", w.entry.reg}, {"value", w.entry.value}};
  if (w.reg != nullptr) {
    j["name"] = w.reg->name;
    nlohmann::json fields = nlohmann::json::object();
    for (size_t i = 0; i < w.reg->field_count; ++i)
      fields[w.reg->fields[i].name] = ork::regs::field_value(w.reg->fields[i], w.entry.value);
    j["fields"] = fields;
  }
  return j;
}

// A regcmd buffer the library builds is a few MiB at most; 256 MiB is far past any real
// one and still bounded. Memory use is the file's bytes plus a fixed window: entries are
// decoded and printed 4096 at a time, never held as objects (a 64 MiB file once took 3.5 GB
// as one JSON document).
constexpr uint64_t kMaxFileBytes = uint64_t{256} << 20;
constexpr size_t kWindow = 4096;

int run(int argc, char** argv) {
  CLI::App app{"Dump a regcmd buffer (raw little-endian u64 entries) as named register writes.\n"
               "Exit 0 ok, 1 --check found a problem, 2 bad usage or an unreadable file."};
  ork::tools::add_conventions(app, "ork_regdump");
  std::string path;
  bool json = false, check = false;
  uint64_t offset_bytes = 0;
  app.add_option("file", path, "regcmd buffer file ('-' reads stdin)")->required();
  ork::tools::add_number(app, "--offset", offset_bytes, "bytes to skip first (a multiple of 8)", uint64_t{0},
                         kMaxFileBytes);
  ork::tools::add_json(app, json);
  app.add_flag("--check", check, "exit 1 if an entry names an unknown register or target");
  if (int rc = ork::tools::parse_command_line(app, argc, argv); rc >= 0) return rc;

  std::string bytes;
  if (const std::string e = ork::tools::read_file_bounded("file", path, kMaxFileBytes, &bytes); !e.empty()) {
    fmt::print(stderr, "ork_regdump: {}\n", e);
    return code(Exit::bad_usage);
  }
  if (offset_bytes % 8 != 0 || offset_bytes > bytes.size() || (bytes.size() - offset_bytes) % 8 != 0) {
    fmt::print(stderr, "ork_regdump: '{}' is {} bytes; after --offset {} that is not a whole number of 8-byte entries\n",
               path, bytes.size(), offset_bytes);
    return code(Exit::bad_usage);
  }
  const size_t count = (bytes.size() - offset_bytes) / 8;
  size_t problems = 0;
  nlohmann::json problem_list = nlohmann::json::array();
  if (json) fmt::print("{{\n\"file\": {},\n\"entries\": [", nlohmann::json(path).dump());
  std::vector<uint64_t> entries;
  for (size_t first = 0; first < count; first += kWindow) {
    entries.resize(std::min(kWindow, count - first));
    for (size_t i = 0; i < entries.size(); ++i) {  // little-endian regardless of the host
      uint64_t v = 0;
      for (int b = 7; b >= 0; --b) v = (v << 8) | static_cast<uint8_t>(bytes[offset_bytes + (first + i) * 8 + b]);
      entries[i] = v;
    }
    const auto writes = ork::regcmd::decode_buffer(entries);
    for (size_t j = 0; j < writes.size(); ++j) {
      const size_t i = first + j;
      const std::string problem = problem_of(writes[j]);
      if (!problem.empty()) {
        ++problems;
        if (json) problem_list.push_back({{"index", i}, {"problem", problem}});
      }
      if (json) {
        fmt::print("{}\n{}", i ? "," : "", to_json(i, writes[j]).dump(2));
      } else {
        fmt::print("{:5} {:016x}  {}{}\n", i, writes[j].raw, ork::regcmd::format(writes[j]),
                   problem.empty() ? "" : "   <-- " + problem);
      }
    }
  }
  if (json) {
    fmt::print("],\n\"problems\": {},\n\"count\": {}\n}}\n", problem_list.dump(), count);
  } else {
    fmt::print("{} entries, {} unknown\n", count, problems);
  }
  return check && problems > 0 ? code(Exit::check_failed) : code(Exit::ok);
}

}  // namespace

int main(int argc, char** argv) {
  return ork::tools::run_main("ork_regdump", [&] { return run(argc, argv); });
}
