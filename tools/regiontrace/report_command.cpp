// `regiontrace report <traces or output folders>`: which rank is slow, per
// region and step, from the ranks' traces (torch_profiler, timeline) and
// memory summaries (see rank_report.hpp).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <stdexcept>

#include "command.hpp"
#include "gzip_io.hpp"
#include "memory_peaks.hpp"
#include "op_slowdown.hpp"
#include "rank_region_times.hpp"
#include "report_output.hpp"

namespace regiontrace::cli {
namespace {

namespace fs = std::filesystem;

struct ReportArguments {
  std::vector<std::string> inputs;
  bool json = false;
  std::string html;
  ReportCriteria criteria;
};

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

bool looks_like_json(const std::string& name) {
  return ends_with(name, ".json") || ends_with(name, ".json.gz");
}

struct Inputs {
  std::vector<RankRegionTimes> traces;
  std::vector<RankMemoryPeaks> memory;
  std::vector<std::string> skipped;     // files in folders that are neither
  std::vector<std::string> unfinished;  // of other files of the run than traces
};

// region_stats_*.json written while its process ran, never finished.
std::string unfinished_statistics(const std::string& path) {
  if (fs::path(path).filename().string().rfind("region_stats_", 0) != 0) return "";
  std::ifstream file(path);
  std::string head(512, '\0');
  file.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<std::size_t>(file.gcount()));
  if (head.find("\"incomplete\":true") == std::string::npos) return "";
  return path +
         ": incomplete: its process ended without closing regiontrace (killed, or ended by "
         "os._exit()); it holds the region statistics of its last flush";
}

void read_file(const std::string& path, bool from_folder, Inputs& in) {
  if (is_memory_summary_name(path)) {
    in.memory.push_back(read_memory_peaks(path));
    return;
  }
  if (std::string note = unfinished_statistics(path); !note.empty()) {
    in.unfinished.push_back(note);
    if (from_folder) return;
  }
  try {
    in.traces.push_back(read_rank_region_times(path));
  } catch (const std::runtime_error& e) {
    // A folder holds other outputs too (op summaries, region_stats, JSONL).
    if (!from_folder) throw;
    in.skipped.push_back(e.what());
  }
}

Inputs read_inputs(const std::vector<std::string>& paths) {
  Inputs in;
  for (const auto& path : paths) {
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
      std::vector<std::string> files;
      for (const auto& entry : fs::directory_iterator(path, ec)) {
        const std::string name = entry.path().filename().string();
        if (entry.is_regular_file() && looks_like_json(name))
          files.push_back(entry.path().string());
      }
      if (ec) throw std::runtime_error(path + ": cannot list the folder (" + ec.message() + ")");
      std::sort(files.begin(), files.end());
      for (const auto& f : files) read_file(f, true, in);
      continue;
    }
    if (!fs::exists(path, ec)) {
      throw std::runtime_error(path +
                               ": no such file or folder (give traces, memory summaries "
                               "or the folders the sinks wrote them to)");
    }
    // A FIFO or device is refused by the reader, as every command does.
    read_file(path, false, in);
  }
  if (in.traces.empty() && in.memory.empty()) {
    throw std::runtime_error(
        "no traces or memory summaries found in the inputs (looked for "
        "*.json and *.json.gz Chrome traces and memory_summary_*.json)");
  }
  return in;
}

int run_report(const ReportArguments& args) {
  Inputs in = read_inputs(args.inputs);
  Report report = build_report(in.traces, in.memory, args.criteria);
  add_slower_ops(report, in.traces);
  if (!args.html.empty()) {
    OutputFile out(args.html);
    out.buffer() += report_html(report);
    out.close();
  }
  if (args.html == "-") {
    // The page is the output; the findings still reach the terminal.
    print_report_text(std::cerr, report);
  } else if (args.json) {
    std::cout << report_json(report);
  } else {
    print_report_text(std::cout, report);
    if (!args.html.empty()) std::cout << "\nHTML report: " << args.html << "\n";
  }
  // Which processes did not finish, and what they kept.
  for (const auto& t : in.traces) {
    if (!t.unfinished.empty()) {
      std::cerr << "regiontrace report: " << t.unfinished << " (" << t.region_spans
                << " region spans)\n";
    }
  }
  for (const auto& note : in.unfinished) std::cerr << "regiontrace report: " << note << "\n";
  if (!in.skipped.empty()) {
    std::cerr << "regiontrace report: skipped " << in.skipped.size()
              << " files of the folders that are not Chrome traces or memory summaries:\n";
    for (const auto& why : in.skipped) std::cerr << "  " << why << "\n";
  }
  return kExitOk;
}

const CommandRegistration registration(60, [](CLI::App& app) -> Runner {
  auto args = std::make_shared<ReportArguments>();
  CLI::App* cmd = app.add_subcommand(
      "report", "Which rank is slow: per region and step, each rank's time, spread, stragglers");
  cmd->add_option("inputs", args->inputs,
                  "Per-rank traces (.json, .json.gz), memory summaries, or folders holding them")
      ->required();
  cmd->add_flag("--json", args->json, "Print one JSON object instead of tables");
  cmd->add_option("--html", args->html,
                  "Also write a self-contained HTML page with a plot per region (- for standard "
                  "output, the tables then going to standard error)");
  cmd->add_option("--threshold", args->criteria.threshold,
                  "A rank is slow in a step when above the median by more than this share of it")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--min-excess-ms", args->criteria.min_excess_ms,
                  "... and by more than this many ms (ignores noise in short regions)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--share", args->criteria.share,
                  "A straggler is slow in more than this share of the steps")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  return [args] { return run_report(*args); };
});

}  // namespace
}  // namespace regiontrace::cli
