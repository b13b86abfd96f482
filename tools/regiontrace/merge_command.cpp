// `regiontrace merge -o all.json.gz rank0.json.gz rank1.json.gz ...`: one
// Perfetto timeline from per-rank traces (see trace_merge.hpp for the rules).
#include <cstdio>
#include <iostream>
#include <memory>

#include "command.hpp"
#include "gzip_io.hpp"
#include "list_option.hpp"
#include "regiontrace/sdk/trace_time.hpp"
#include "trace_merge.hpp"

namespace regiontrace::cli {
namespace {

std::string signed_ms(double us) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%+.3f ms", sdk::units::us_to_ms(us));
  return buf;
}

int run_merge(const MergeOptions& options) {
  // With the trace on standard output, what merge says goes beside it.
  std::ostream& out = is_stream_output(options.output) ? std::cerr : std::cout;
  const MergeSummary summary = merge_traces(options);
  std::size_t traces = 0;
  for (const auto& rank : summary.ranks) traces += rank.inputs.size();
  out << "merged " << summary.ranks.size() << " ranks (" << traces << " traces, "
      << summary.events_written << " events) into " << options.output << "\n"
      << "  clock: "
      << (summary.clock == "realtime"
              ? "wall clock (each trace's clockSync)"
              : "each trace's baseTimeNanoseconds (no clockSync in every input)")
      << "\n";
  for (const auto& rank : summary.ranks) {
    out << "  rank " << rank.rank << " (from " << rank.rank_from << "): pids";
    for (const auto& [original, pid] : rank.pids) out << " " << original << "->" << pid;
    out << "\n";
    for (const auto& in : rank.inputs) {
      out << "    " << in.source << (in.kind.empty() ? "" : " [" + in.kind + "]") << ", "
          << in.events << " events\n";
    }
  }
  if (!options.align_on_mark.empty() || options.align_starts) {
    out << "aligned on "
        << (options.align_starts ? std::string("the first event of each rank")
                                 : "mark \"" + options.align_on_mark + "\" #" +
                                       std::to_string(options.align_occurrence))
        << "; shift applied per rank:\n";
    for (const auto& rank : summary.ranks) {
      out << "  rank " << rank.rank << ": " << signed_ms(rank.align_shift_us) << "\n";
    }
  }
  return kExitOk;
}

// "mark:NAME" or "mark:NAME#N".
bool parse_align_on(const std::string& text, MergeOptions& options, std::string& error) {
  if (text.rfind("mark:", 0) != 0 || text.size() == 5) {
    error = "--align-on '" + text + "': expected mark:NAME or mark:NAME#N (N counts from 1)";
    return false;
  }
  std::string name = text.substr(5);
  const auto hash = name.rfind('#');
  if (hash != std::string::npos) {
    const std::string n = name.substr(hash + 1);
    std::size_t used = 0;
    long value = 0;
    try {
      value = std::stol(n, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != n.size() || value < 1) {
      error = "--align-on '" + text + "': occurrence '" + n + "' is not a positive integer";
      return false;
    }
    options.align_occurrence = static_cast<int>(value);
    name = name.substr(0, hash);
  }
  options.align_on_mark = name;
  return true;
}

const CommandRegistration registration(40, [](CLI::App& app) -> Runner {
  auto options = std::make_shared<MergeOptions>();
  auto ranks_text = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand(
      "merge", "Put per-rank Chrome/Perfetto traces (.json or .json.gz) on one timeline");
  cmd->add_option("traces", options->inputs, "Per-rank trace files")->required();
  cmd->add_option("-o,--output", options->output,
                  "Merged trace (.json, or .json.gz to compress; - for standard output)")
      ->required();
  // A plain string split here: a CLI11 vector option would swallow the
  // trace files that follow it.
  cmd->add_option("--ranks", *ranks_text,
                  "Rank of each input, comma separated, in order (default: the rank the "
                  "trace states, then rankN in the file name, then the position)");
  cmd->add_flag("--align-starts", options->align_starts,
                "Shift each rank so its first event starts with the earliest rank's (for hosts "
                "whose clocks disagree)");
  auto align_on = std::make_shared<std::string>();
  auto occurrence = std::make_shared<int>(0);
  cmd->add_option("--align-on", *align_on,
                  "mark:NAME[#N]: shift each rank so the Nth (default first) occurrence of the "
                  "mark NAME (emitted right after a barrier) lines up with the lowest rank's");
  cmd->add_option("--align-occurrence", *occurrence,
                  "Which occurrence of the --align-on mark to use (from 1)");
  return [options, ranks_text, align_on, occurrence] {
    if (!align_on->empty()) {
      std::string error;
      if (!parse_align_on(*align_on, *options, error)) {
        std::cerr << "regiontrace merge: " << error << "\n";
        return kExitUsage;
      }
    }
    if (*occurrence != 0) {
      if (align_on->empty()) {
        std::cerr << "regiontrace merge: --align-occurrence needs --align-on mark:NAME\n";
        return kExitUsage;
      }
      options->align_occurrence = *occurrence;
    }
    for (const auto& rank : split_list(*ranks_text)) {
      std::size_t used = 0;
      long long value = 0;
      try {
        value = std::stoll(rank, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used == 0 || used != rank.size()) {
        std::cerr << "regiontrace merge: --ranks: '" << rank << "' is not an integer\n";
        return kExitUsage;
      }
      options->ranks.push_back(value);
    }
    return run_merge(*options);
  };
});

}  // namespace
}  // namespace regiontrace::cli
