#include "command_runner.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace regiontrace::nvtx_record {

int run_command_with_env(const std::vector<std::string>& command,
                         const std::vector<std::pair<std::string, std::string>>& env) {
  if (command.empty()) return 127;
  std::vector<char*> argv;
  for (const std::string& a : command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);

  // The terminal sends Ctrl-C to the whole foreground group: the command
  // gets it, and we stay to report what it recorded.
  struct sigaction ignore {
  }, old_int{}, old_term{};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGINT, &ignore, &old_int);
  sigaction(SIGTERM, &ignore, &old_term);

  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    sigaction(SIGINT, &old_int, nullptr);
    sigaction(SIGTERM, &old_term, nullptr);
    for (const auto& [name, value] : env) setenv(name.c_str(), value.c_str(), 1);
    execvp(argv[0], argv.data());
    std::fprintf(stderr, "regiontrace-nvtx-record: cannot run `%s`: %s\n", argv[0],
                 std::strerror(errno));
    _exit(127);
  }
  int status = 0;
  int code = 127;
  if (pid > 0) {
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(status)) {
      code = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
      code = 128 + WTERMSIG(status);
    }
  } else {
    std::fprintf(stderr, "regiontrace-nvtx-record: fork failed: %s\n", std::strerror(errno));
  }
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  return code;
}

}  // namespace regiontrace::nvtx_record
