// The one command-line convention of every libork tool (docs/tools.md, "Conventions"):
// exit codes, --help with defaults, --version, --device, --json (never with --csv), the
// same names for the same things (M K N, --repeat, --cores, --seed), numbers parsed
// strictly with ranges in plain words, and a main that no exception leaves.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <type_traits>

#include <CLI/CLI.hpp>

namespace ork::tools {

enum class Exit : int {
  ok = 0,                  // the run succeeded and every check passed
  check_failed = 1,        // a check failed (a mismatch, a missed target), or the run failed
  bad_usage = 2,           // bad arguments or bad input files: nothing ran
  device_unavailable = 3,  // the device named (or the default) could not be opened
};

inline int code(Exit e) { return static_cast<int>(e); }

// "ork_matmul 0.1.0 (libork 0.1.0, C API 2; device interfaces: rknpu, rocket, emu-rknpu,
// emu-rocket, cpu; io_uring: yes)": what --version prints.
std::string version_text(const std::string& tool);

// Adds --version (prints version_text and exits 0) and shows defaults in --help.
void add_conventions(CLI::App& app, const std::string& tool);

// --device D (-d): a device name as the C API takes it; "" = NULL ($ORK_DEVICE, else auto).
CLI::Option* add_device(CLI::App& app, std::string& device, const std::string& extra_help = "");

// --json, and --csv where a tool has one: the two exclude each other (exit 2 when both).
CLI::Option* add_json(CLI::App& app, bool& json);
CLI::Option* add_csv(CLI::App& app, bool& csv, CLI::Option* json_option);

// A whole number in [lo, hi], parsed strictly: decimal digits only (an optional '-' for
// signed types), no wrap (-1 for an unsigned is refused), no octal or hex, no trailing
// text. The error says it in words: "--seed: -1 is negative: expected a whole number from 0
// to 18446744073709551615".
CLI::Validator whole_number(int64_t lo, int64_t hi);
CLI::Validator whole_number_u64(uint64_t lo, uint64_t hi);
// A finite number in [lo, hi] (NaN and infinities refused).
CLI::Validator real_number(double lo, double hi);

// add_option + the strict check for T's type and [lo, hi] + the default shown in --help.
template <class T>
CLI::Option* add_number(CLI::App& app, const std::string& name, T& value, const std::string& help, T lo,
                        T hi = std::numeric_limits<T>::max()) {
  CLI::Option* o = app.add_option(name, value, help);
  if constexpr (std::is_floating_point_v<T>) {
    o->transform(real_number(static_cast<double>(lo), static_cast<double>(hi)));
  } else if constexpr (std::is_unsigned_v<T>) {
    o->transform(whole_number_u64(static_cast<uint64_t>(lo), static_cast<uint64_t>(hi)));
  } else {
    o->transform(whole_number(static_cast<int64_t>(lo), static_cast<int64_t>(hi)));
  }
  return o->capture_default_str();
}

// The shared names: --repeat N (timed repetitions), --cores N, --seed S. `old_name` keeps
// a tool's earlier spelling working (--iters, --reps: scripts and tests use them).
CLI::Option* add_repeat(CLI::App& app, int& repeat, int max = 100000,
                        const std::string& help = "timed repetitions (min / median / max are reported)",
                        const std::string& old_name = "");
CLI::Option* add_cores(CLI::App& app, int& cores, const std::string& help = "NPU cores; 0 = all the device has");
CLI::Option* add_seed(CLI::App& app, uint64_t& seed, const std::string& help = "seed of the random data");

// Parses argv with `app`. Returns -1 when the tool should go on; otherwise the exit code:
// 0 after --help or --version, 2 after a parse error (the message, which names the option,
// is printed on stderr by CLI11).
int parse_command_line(CLI::App& app, int argc, char** argv);

// Runs a tool's body so that nothing escapes main: an exception becomes a message naming
// the tool and exit 1 (out of memory: "out of memory"), never an abort.
int run_main(const std::string& tool, const std::function<int()>& body);

}  // namespace ork::tools
