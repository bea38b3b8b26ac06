// ork_regdump: a regcmd buffer file (raw little-endian u64 entries, e.g. a BO dump or an
// intercept capture) printed as named register writes, by the same decoder and register
// description the emulator uses. --check turns unknown registers and wrong targets into a
// failed check (exit 1); --json for scripts.
#include <fmt/format.h>

#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <vector>

#include "driver/regcmd/regcmd.h"
#include "tools/common/cli.h"

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

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Dump a regcmd buffer (raw little-endian u64 entries) as named register writes"};
  std::string path;
  bool json = false, check = false;
  size_t offset_bytes = 0;
  app.add_option("file", path, "regcmd buffer file")->required();
  app.add_option("--offset", offset_bytes, "bytes to skip first (a multiple of 8)");
  app.add_flag("--json", json, "JSON output");
  app.add_flag("--check", check, "exit 1 if an entry names an unknown register or target");
  if (int rc = ork::tools::parse_command_line(app, argc, argv); rc >= 0) return rc;

  std::ifstream in(path, std::ios::binary);
  if (!in) {
    fmt::print(stderr, "ork_regdump: cannot open '{}'\n", path);
    return code(Exit::bad_usage);
  }
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (offset_bytes % 8 != 0 || offset_bytes > bytes.size() || (bytes.size() - offset_bytes) % 8 != 0) {
    fmt::print(stderr, "ork_regdump: '{}' is {} bytes; after --offset {} that is not a whole number of 8-byte entries\n",
               path, bytes.size(), offset_bytes);
    return code(Exit::bad_usage);
  }
  std::vector<uint64_t> entries((bytes.size() - offset_bytes) / 8);
  for (size_t i = 0; i < entries.size(); ++i) {  // little-endian regardless of the host
    uint64_t v = 0;
    for (int b = 7; b >= 0; --b) v = (v << 8) | static_cast<uint8_t>(bytes[offset_bytes + i * 8 + b]);
    entries[i] = v;
  }
  const auto writes = ork::regcmd::decode_buffer(entries);
  size_t problems = 0;
  nlohmann::json out = {{"file", path}, {"entries", nlohmann::json::array()}, {"problems", nlohmann::json::array()}};
  for (size_t i = 0; i < writes.size(); ++i) {
    const std::string problem = problem_of(writes[i]);
    if (!problem.empty()) {
      ++problems;
      out["problems"].push_back({{"index", i}, {"problem", problem}});
    }
    if (json) {
      out["entries"].push_back(to_json(i, writes[i]));
    } else {
      fmt::print("{:5} {:016x}  {}{}\n", i, writes[i].raw, ork::regcmd::format(writes[i]),
                 problem.empty() ? "" : "   <-- " + problem);
    }
  }
  if (json) {
    out["count"] = writes.size();
    fmt::print("{}\n", out.dump(2));
  } else {
    fmt::print("{} entries, {} unknown\n", writes.size(), problems);
  }
  return check && problems > 0 ? code(Exit::check_failed) : code(Exit::ok);
}
