// Runs a tool binary for the tests: exit code, stdout and stderr.
#pragma once

#include <string>
#include <vector>

namespace ork::tools::test {

struct RunResult {
  int exit_code = -1;  // the tool's exit status; -1 when it did not exit normally
  std::string out, err;
};

// Runs `argv` (argv[0] = the binary path) with `env` entries ("NAME=value") added to the
// environment and "ORK_DEVICE" removed unless `env` sets it.
RunResult run_tool(const std::vector<std::string>& argv,
                   const std::vector<std::string>& env = {});

// The path in the environment variable `var` (set by meson), or "" when unset.
std::string tool_path(const char* var);

}  // namespace ork::tools::test
