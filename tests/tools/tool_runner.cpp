// fork + exec with both output streams sent to temporary files (no shell: arguments are
// passed as they are, so bad-usage tests can pass anything).
#include "tests/tools/tool_runner.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace ork::tools::test {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int temp_file(std::string& path) {
  char name[] = "/tmp/ork_tool_run_XXXXXX";
  int fd = mkstemp(name);
  path = name;
  return fd;
}

}  // namespace

std::string tool_path(const char* var) {
  const char* p = std::getenv(var);
  return p ? p : "";
}

RunResult run_tool(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
  RunResult result;
  std::string out_path, err_path;
  const int out_fd = temp_file(out_path), err_fd = temp_file(err_path);
  if (out_fd < 0 || err_fd < 0) return result;
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(out_fd, STDOUT_FILENO);
    dup2(err_fd, STDERR_FILENO);
    unsetenv("ORK_DEVICE");
    for (const std::string& e : env) putenv(const_cast<char*>(e.c_str()));
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  int status = 0;
  if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status))
    result.exit_code = WEXITSTATUS(status);
  close(out_fd);
  close(err_fd);
  result.out = slurp(out_path);
  result.err = slurp(err_path);
  unlink(out_path.c_str());
  unlink(err_path.c_str());
  return result;
}

}  // namespace ork::tools::test
