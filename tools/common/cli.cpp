// The shared command line (cli.h). CLI11 reports --help as a "success" exception and every
// parse problem as an error with its own codes (e.g. 105/106/109); tools promise 2 for bad
// usage, so they are mapped here. CLI11 2.1 converts numbers with strtoull/strtoll in base 0
// (so "-1" wraps to 2^64 - 1 and "010" is 8): the validators below run first, refuse what is
// not a plain decimal in range, and hand CLI11 the canonical digits.
#include "tools/common/cli.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <exception>
#include <new>

#include <fmt/format.h>

#include "driver/common/echo.h"
#include "driver/common/safe_file.h"
#include "ork/ork.h"
#include "ork_config.h"

namespace ork::tools {
namespace {

template <class T>
std::string whole_range_words(T lo, T hi) {
  if (hi == std::numeric_limits<T>::max()) return fmt::format("a whole number of at least {}", lo);
  return fmt::format("a whole number from {} to {}", lo, hi);
}

std::string real_range_words(double lo, double hi) {
  if (hi >= std::numeric_limits<double>::max()) return fmt::format("a finite number of at least {}", lo);
  return fmt::format("a number from {} to {}", lo, hi);
}

// Parses `text` as a decimal T; "" on success (value set), else why not, in words.
template <class T>
std::string parse_whole(const std::string& text, T lo, T hi, T* value) {
  const std::string want = whole_range_words(lo, hi);
  const bool negative = !text.empty() && text[0] == '-';
  const size_t first = negative ? 1 : 0;
  if (text.size() == first || text.find_first_not_of("0123456789", first) != std::string::npos)
    return fmt::format("'{}' is not a whole number: expected {}", echo_capped(text), want);
  if (negative && std::is_unsigned_v<T>) return fmt::format("{} is negative: expected {}", echo_capped(text), want);
  T v{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec == std::errc::result_out_of_range || (ec == std::errc() && (v > hi)))
    return fmt::format("{} is too large: expected {}", echo_capped(text), want);
  if (ec != std::errc() || end != text.data() + text.size())
    return fmt::format("'{}' is not a whole number: expected {}", echo_capped(text), want);
  if (v < lo) return fmt::format("{} is too small: expected {}", text, want);
  *value = v;
  return {};
}

template <class T>
CLI::Validator whole(T lo, T hi) {
  return CLI::Validator(
      [lo, hi](std::string& text) {
        T v{};
        std::string err = parse_whole<T>(text, lo, hi, &v);
        if (err.empty()) text = std::to_string(v);  // canonical: CLI11 reads exactly this
        return err;
      },
      hi == std::numeric_limits<T>::max() ? fmt::format("INT >= {}", lo) : fmt::format("INT {}..{}", lo, hi));
}

}  // namespace

std::string version_text(const std::string& tool) {
  // The device names lib/api/device.cpp (open_device) accepts: every interface is built in
  // (the kernel ones are probed at run time, the emulator and cpu need nothing).
  return fmt::format("{} {} (libork {}, C API {}; device interfaces: rknpu, rocket, emu-rknpu, emu-rocket, cpu; "
                     "io_uring: {})",
                     tool, ORK_VERSION, ORK_VERSION, ORK_API_VERSION, ORK_HAVE_URING ? "yes" : "no");
}

void add_conventions(CLI::App& app, const std::string& tool) {
  app.option_defaults()->always_capture_default();  // --help shows every default
  app.set_version_flag("--version", [tool] { return version_text(tool); }, "print the version and exit");
  app.get_formatter()->column_width(34);
}

CLI::Option* add_device(CLI::App& app, std::string& device, const std::string& extra_help) {
  return app.add_option("--device,-d", device,
                        "rknpu[:NODE], rocket[:NODE], emu (= emu-rknpu), emu-rocket, cpu or auto; default: "
                        "$ORK_DEVICE, else auto (the first real NPU, else emu)" +
                            extra_help);
}

CLI::Option* add_json(CLI::App& app, bool& json) {
  return app.add_flag("--json", json, "print one JSON object on stdout (for scripts)");
}

CLI::Option* add_csv(CLI::App& app, bool& csv, CLI::Option* json_option) {
  CLI::Option* o = app.add_flag("--csv", csv, "print CSV on stdout");
  o->excludes(json_option);
  return o;
}

CLI::Validator whole_number(int64_t lo, int64_t hi) { return whole<int64_t>(lo, hi); }
CLI::Validator whole_number_u64(uint64_t lo, uint64_t hi) { return whole<uint64_t>(lo, hi); }

CLI::Validator real_number(double lo, double hi) {
  return CLI::Validator(
      [lo, hi](std::string& text) -> std::string {
        const std::string want = real_range_words(lo, hi);
        double v = 0;
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
        if (text.empty() || ec != std::errc() || end != text.data() + text.size() || !std::isfinite(v))
          return fmt::format("'{}' is not a finite number: expected {}", echo_capped(text), want);
        if (v < lo || v > hi) return fmt::format("{} is out of range: expected {}", echo_capped(text), want);
        text = fmt::format("{}", v);  // shortest round trip
        return {};
      },
      hi >= std::numeric_limits<double>::max() ? fmt::format("NUMBER >= {}", lo)
                                                : fmt::format("NUMBER {}..{}", lo, hi));
}

CLI::Option* add_repeat(CLI::App& app, int& repeat, int max, const std::string& help, const std::string& old_name) {
  return add_number(app, old_name.empty() ? "--repeat" : "--repeat," + old_name, repeat,
                    old_name.empty() ? help : help + " (" + old_name + ": the old name)", 1, max);
}

CLI::Option* add_cores(CLI::App& app, int& cores, const std::string& help) {
  return add_number(app, "--cores", cores, help, 0, 3);
}

CLI::Option* add_seed(CLI::App& app, uint64_t& seed, const std::string& help) {
  return add_number(app, "--seed", seed, help, uint64_t{0});
}

int parse_command_line(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) {
      app.exit(e);  // prints the help or the version
      return code(Exit::ok);
    }
    // CLI11's message with the value it names capped (a 100 KB argument is not echoed whole).
    std::fprintf(stderr, "%s\nRun with --help for more information.\n", echo_capped(e.what(), 4 * kEchoBytes).c_str());
    return code(Exit::bad_usage);
  }
  // An empty value given is refused, never read as the option left out: `--device ""` once
  // opened the default device and `--budget ""` took the default budget.
  for (const CLI::Option* o : app.get_options()) {
    if (o->get_type_size() == 0 || o->count() == 0) continue;
    for (const std::string& r : o->results()) {
      if (!r.empty()) continue;
      std::fprintf(stderr, "%s: an empty value: give one, or leave the option out for its default\n",
                   o->get_name().c_str());
      return code(Exit::bad_usage);
    }
  }
  return -1;
}

int run_main(const std::string& tool, const std::function<int()>& body) {
  // SIGINT / SIGTERM / SIGHUP while an output is written: its temporary file is removed and
  // the output is left as it was (driver/common/safe_file.h).
  remove_temp_files_on_signals();
  try {
    return body();
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "%s: out of memory\n", tool.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: internal error: %s\n", tool.c_str(), e.what());
  } catch (...) {
    std::fprintf(stderr, "%s: internal error (unknown exception)\n", tool.c_str());
  }
  return code(Exit::check_failed);
}

}  // namespace ork::tools
