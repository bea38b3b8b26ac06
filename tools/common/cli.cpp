// CLI11 reports --help as a "success" exception and every parse problem as an error with
// its own codes (e.g. 105/106/109); tools promise 2 for bad usage, so they are mapped here.
#include "tools/common/cli.h"

namespace ork::tools {

int parse_command_line(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int cli_code = app.exit(e);  // prints help / version / the error
    return cli_code == 0 ? code(Exit::ok) : code(Exit::bad_usage);
  }
  return -1;
}

}  // namespace ork::tools
