// What every libork tool shares on its command line: the exit codes and the CLI11 glue
// that maps CLI11's own codes onto them (architecture.md section 6: 0 ok, 1 failed check,
// 2 bad usage).
#pragma once

#include <CLI/CLI.hpp>

namespace ork::tools {

enum class Exit : int {
  ok = 0,            // the run succeeded and every check passed
  check_failed = 1,  // a check failed (a mismatch), or the device or job failed
  bad_usage = 2,     // bad arguments or bad input files: nothing ran
};

inline int code(Exit e) { return static_cast<int>(e); }

// Parses argv with `app`. Returns -1 when the tool should go on; otherwise the exit code:
// 0 after --help, 2 after a parse error (the message is printed on stderr by CLI11).
int parse_command_line(CLI::App& app, int argc, char** argv);

}  // namespace ork::tools
