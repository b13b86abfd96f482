// regiontrace-nvtx-record: see what a program shows Nsight Systems, without a
// GPU or Nsight. Runs the command with the NVTX recording injection attached
// and prints its NVTX ranges as a tree with durations:
//
//   REGIONTRACE_SINKS=nvtx regiontrace-nvtx-record -- ./train --steps 3
//   regiontrace-nvtx-record -o calls.jsonl --format json --report tree.json -- ./train
//   regiontrace-nvtx-record --from calls.jsonl          # report an earlier run
//
// Exits with the command's exit code (128 + signal if a signal ended it).
#include <stdlib.h>
#include <CLI/CLI.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <stdexcept>

#include "call_records.hpp"
#include "command_runner.hpp"
#include "injection_path.hpp"
#include "range_tree.hpp"
#include "tree_report.hpp"

namespace {

namespace fs = std::filesystem;
using namespace regiontrace::nvtx_record;

constexpr int kUsageError = 2;

struct Settings {
  std::string output;
  std::string report;
  std::string format = "text";
  std::vector<std::string> from;
  std::vector<std::string> domains;
  std::string injection;
};

// A temporary folder for the records when the user keeps none.
class ScratchDir {
 public:
  ScratchDir() {
    std::string tmpl = (fs::temp_directory_path() / "regiontrace_nvtx_record_XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("cannot create " + tmpl);
    path_ = tmpl;
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

void write_report(const Settings& s, const RangeForest& forest) {
  const std::string text = s.format == "json" ? json_report(forest) : text_report(forest);
  if (s.report.empty()) {
    std::cout << text << std::flush;
    return;
  }
  std::ofstream out(s.report, std::ios::trunc);
  out << text;
  if (!out) throw std::runtime_error("cannot write the report to " + s.report);
}

int record(const Settings& s, const std::vector<std::string>& command) {
  const std::string injection = find_injection(s.injection);
  std::unique_ptr<ScratchDir> scratch;
  std::string records = s.output;
  if (records.empty()) {
    scratch = std::make_unique<ScratchDir>();
    records = (scratch->path() / "calls.jsonl").string();
  } else {
    records = fs::absolute(records).string();
    std::error_code ec;
    fs::remove(records, ec);  // the injection appends: start from nothing
  }
  // One file for every process the command starts; lines carry the pid.
  const int code = run_command_with_env(
      command, {{"NVTX_INJECTION64_PATH", injection}, {"NVTX_RECORD_FILE", records}});
  std::vector<std::string> files;
  if (fs::exists(records)) files.push_back(records);
  write_report(s, build_forest(read_call_log(files), s.domains));
  if (!s.output.empty())
    std::cerr << "regiontrace-nvtx-record: NVTX calls kept in " << records << "\n";
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Runs a command with an NVTX tool attached that records every NVTX call, then prints the "
      "ranges as a tree with durations: what Nsight Systems would show, without a GPU.\n"
      "Usage: regiontrace-nvtx-record [options] [--] command [args...]"};
  app.name("regiontrace-nvtx-record");
  Settings s;
  app.add_option("-o,--output", s.output, "keep the recorded calls (JSONL) in this file");
  app.add_option("--report", s.report, "write the tree to this file instead of stdout");
  app.add_option("--format", s.format, "report as `text` (default) or `json`")
      ->check(CLI::IsMember({"text", "json"}));
  app.add_option("--from", s.from, "report recorded calls from these files; runs nothing")
      ->check(CLI::ExistingFile);
  app.add_option("--domain", s.domains, "only these NVTX domains (\"\" is NVTX's default)");
  app.add_option("--injection", s.injection, "the recording library to attach");
  app.prefix_command();  // everything from the command on is the command's
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : kUsageError;
  }
  std::vector<std::string> command = app.remaining();
  if (!command.empty() && command.front() == "--") command.erase(command.begin());
  try {
    if (!s.from.empty()) {
      if (!command.empty()) {
        std::cerr << "regiontrace-nvtx-record: --from reports earlier records; give no command\n";
        return kUsageError;
      }
      write_report(s, build_forest(read_call_log(s.from), s.domains));
      return 0;
    }
    if (command.empty()) {
      std::cerr << "regiontrace-nvtx-record: no command to run (see --help)\n";
      return kUsageError;
    }
    return record(s, command);
  } catch (const std::exception& e) {
    std::cerr << "regiontrace-nvtx-record: " << e.what() << "\n";
    return kUsageError;
  }
}
