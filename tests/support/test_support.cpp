#include "test_support.hpp"

#include <gtest/gtest.h>

#include <ftw.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "remove_tree.hpp"
#include "trace_nesting_check.hpp"

extern char** environ;

namespace regiontrace::test {

namespace fs = std::filesystem;

std::string test_plugin_dir() {
  return REGIONTRACE_TEST_PLUGIN_DIR;
}
std::string builtin_plugin_dir() {
  return REGIONTRACE_BUILTIN_PLUGIN_DIR;
}
std::string source_dir() {
  return REGIONTRACE_SOURCE_DIR;
}
std::string binary_dir() {
  return REGIONTRACE_BINARY_DIR;
}

void remove_tree(const std::string& path) {
  // Children first (FTW_DEPTH), links not followed (FTW_PHYS); an entry
  // that cannot go does not stop the others.
  const auto remove_entry = [](const char* item, const struct stat*, int, struct FTW*) {
    ::remove(item);
    return 0;
  };
  nftw(path.c_str(), remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

TempDir::TempDir() {
  std::string tmpl = (fs::temp_directory_path() / "regiontrace_test_XXXXXX").string();
  if (mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = tmpl;
}

TempDir::~TempDir() {
  if (check_nesting_) {
    for (const TraceFileReport& f : check_traces_under(path_)) {
      if (f.report.violation_count > 0) ADD_FAILURE() << describe(f);
    }
  }
  if (getenv("REGIONTRACE_KEEP_TEST_FILES") == nullptr) {
    remove_tree(path_);
  }
}

ScopedEnv::ScopedEnv(
    std::initializer_list<std::pair<std::string, std::optional<std::string>>> vars) {
  for (const auto& [name, value] : vars) {
    const char* old = getenv(name.c_str());
    saved_[name] = old ? std::optional<std::string>(old) : std::nullopt;
    if (value) {
      setenv(name.c_str(), value->c_str(), 1);
    } else {
      unsetenv(name.c_str());
    }
  }
}

ScopedEnv::~ScopedEnv() {
  for (const auto& [name, value] : saved_) {
    if (value) {
      setenv(name.c_str(), value->c_str(), 1);
    } else {
      unsetenv(name.c_str());
    }
  }
}

CleanEnv::CleanEnv() {
  std::vector<std::string> names;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string kv(*e);
    const std::string name = kv.substr(0, kv.find('='));
    if (name.rfind("REGIONTRACE_", 0) == 0 || name.rfind("FASTVIDEO_", 0) == 0) {
      saved_[name] = kv.substr(kv.find('=') + 1);
      names.push_back(name);
    }
  }
  for (const std::string& n : names) unsetenv(n.c_str());
}

CleanEnv::~CleanEnv() {
  for (const auto& [name, value] : saved_) setenv(name.c_str(), value.c_str(), 1);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_file(const std::string& path, const std::string& text) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

std::vector<std::string> read_lines(const std::string& path) {
  std::vector<std::string> lines;
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

nlohmann::json read_json(const std::string& path) {
  return nlohmann::json::parse(read_file(path));
}

std::vector<nlohmann::json> read_jsonl(const std::string& path) {
  std::vector<nlohmann::json> out;
  for (const std::string& l : read_lines(path)) {
    if (!l.empty()) out.push_back(nlohmann::json::parse(l));
  }
  return out;
}

std::vector<std::string> list_files(const std::string& dir, const std::string& prefix) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) == 0) out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> output_files(const std::string& dir, const std::string& stem) {
  std::vector<std::string> out;
  for (const std::string& path : list_files(dir, stem + "_")) {
    std::string rest = fs::path(path).filename().string().substr(stem.size() + 1);
    std::size_t digits = 0;
    while (digits < rest.size() && std::isdigit(static_cast<unsigned char>(rest[digits]))) ++digits;
    if (digits > 0 && digits < rest.size() && rest[digits] == '_') rest = rest.substr(digits + 1);
    if (rest.rfind("rank", 0) == 0) out.push_back(path);
  }
  return out;
}

Options recorder_options(const std::string& file, std::map<std::string, std::string> extra) {
  Options o;
  o.read_environment = false;
  o.set("plugins.paths", test_plugin_dir());
  o.set("sinks.recorder.file", file);
  o.set("output_dir", fs::path(file).parent_path().string());
  for (auto& [k, v] : extra) o.set(k, v);
  return o;
}

ChildResult run_in_child(const std::function<int()>& fn) {
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    int code = 1;
    try {
      code = fn();
    } catch (...) {
      code = 99;
    }
    std::exit(code);
  }
  // A child that hangs (a lock inherited held, say) is killed after two
  // minutes: the test fails naming the signal instead of stalling the suite.
  int status = 0;
  for (int waited_ms = 0;; waited_ms += 10) {
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid || (done < 0 && errno != EINTR)) break;
    if (waited_ms == 120000) {
      std::fprintf(stderr, "run_in_child: child %d still running after 120 s: killed\n",
                   static_cast<int>(pid));
      kill(pid, SIGKILL);
    }
    usleep(10000);
  }
  ChildResult r;
  r.pid = pid;
  if (WIFEXITED(status)) {
    r.exited = true;
    r.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    r.signal = WTERMSIG(status);
  }
  return r;
}

CommandResult run_command(const std::string& command) {
  CommandResult r;
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  if (p == nullptr) return r;
  std::array<char, 4096> buf{};
  size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.output.append(buf.data(), n);
  const int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace regiontrace::test
