// Shared helpers for the test suites: temporary folders, environment guards,
// reading what sinks wrote, and running code in a child process.
#pragma once

#include <sys/types.h>

#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "regiontrace/regiontrace.hpp"

namespace regiontrace::test {

// Folder of the test plugins (recorder, noop, ...) in the build tree.
std::string test_plugin_dir();
// Folder of the built-in sinks in the build tree.
std::string builtin_plugin_dir();
std::string source_dir();
std::string binary_dir();

// A fresh folder, removed with everything in it when the guard goes. Before
// that, every Chrome trace (*.json, *.json.gz) left in it is checked against
// the nesting rule (trace_nesting_check.hpp) and each violation is a test
// failure, so every test that makes a trace checks it without asking.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }
  // For a test that writes a trace breaking the rule on purpose (input for
  // a reader that must cope with one).
  void allow_nesting_violations() { check_nesting_ = false; }

 private:
  std::string path_;
  bool check_nesting_ = true;
};

// Sets (or unsets, with nullopt) variables for the guard's lifetime.
class ScopedEnv {
 public:
  ScopedEnv(std::initializer_list<std::pair<std::string, std::optional<std::string>>> vars);
  ~ScopedEnv();

 private:
  std::map<std::string, std::optional<std::string>> saved_;
};

// Removes every REGIONTRACE_* and FASTVIDEO_* variable for the guard's life.
class CleanEnv {
 public:
  CleanEnv();
  ~CleanEnv();

 private:
  std::map<std::string, std::string> saved_;
};

std::string read_file(const std::string& path);
void write_file(const std::string& path, const std::string& text);
std::vector<std::string> read_lines(const std::string& path);
nlohmann::json read_json(const std::string& path);
std::vector<nlohmann::json> read_jsonl(const std::string& path);
// Files in `dir` whose name starts with `prefix`, sorted.
std::vector<std::string> list_files(const std::string& dir, const std::string& prefix = "");
// A sink's files in `dir` named by SinkContext::output_path: "<stem>_rank..."
// of a process's first session, "<stem>_<n>_rank..." of a later one; sorted.
std::vector<std::string> output_files(const std::string& dir, const std::string& stem);

// Options that load the test plugins and run `sinks` (name -> settings).
Options recorder_options(const std::string& file, std::map<std::string, std::string> extra = {});

// A worker thread parks (alive, regions open) until the test releases it:
// for what the library does with a live thread's records when it stops.
//   worker: ...record...; rendezvous.park();
//   test:   rendezvous.wait_parked(); shutdown(); rendezvous.release();
class Rendezvous {
 public:
  void park() {
    std::unique_lock<std::mutex> lock(mutex_);
    parked_ = true;
    cv_.notify_all();
    cv_.wait(lock, [&] { return released_; });
  }
  void wait_parked() {
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait(lock, [&] { return parked_; });
  }
  void release() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      released_ = true;
    }
    cv_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool parked_ = false;
  bool released_ = false;
};

struct ChildResult {
  pid_t pid = 0;
  bool exited = false;
  int exit_code = -1;
  int signal = 0;
};
// Runs fn in a forked child; fn's return value is the exit code.
ChildResult run_in_child(const std::function<int()>& fn);

// The AddressSanitizer runtimes of GCC 12 and clang 14 take no allocator
// lock around fork(): a child forked while another thread of the parent
// allocates waits forever on the lock that thread held (google/sanitizers
// issue 774, fixed in later runtimes). Tests that fork while sink threads
// run skip themselves under it; the plain build runs them.
#if defined(__SANITIZE_ADDRESS__)
#define REGIONTRACE_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define REGIONTRACE_TEST_ASAN 1
#endif
#endif
#if defined(REGIONTRACE_TEST_ASAN)
#define REGIONTRACE_SKIP_FORK_WITH_THREADS_UNDER_ASAN()                                        \
  GTEST_SKIP() << "AddressSanitizer (this compiler's runtime) deadlocks a child forked while " \
                  "another thread allocates"
#else
#define REGIONTRACE_SKIP_FORK_WITH_THREADS_UNDER_ASAN() (void)0
#endif

// Runs a shell command, returning exit code and captured stdout+stderr.
struct CommandResult {
  int exit_code = -1;
  std::string output;
};
CommandResult run_command(const std::string& command);

}  // namespace regiontrace::test
