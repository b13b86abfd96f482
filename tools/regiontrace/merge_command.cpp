// `regiontrace merge -o all.json.gz rank0.json.gz rank1.json.gz ...`: one
// Perfetto timeline from per-rank traces (see trace_merge.hpp for the rules).
#include <iostream>
#include <memory>

#include "command.hpp"
#include "list_option.hpp"
#include "trace_merge.hpp"

namespace regiontrace::cli {
namespace {

int run_merge(const MergeOptions& options) {
  const MergeSummary summary = merge_traces(options);
  std::cout << "merged " << summary.ranks.size() << " ranks (" << summary.events_written
            << " events) into " << options.output << "\n";
  for (const auto& rank : summary.ranks) {
    std::cout << "  rank " << rank.rank << " (from " << rank.rank_from << "): " << rank.source
              << ", " << rank.events << " events, pids";
    for (const auto& [original, pid] : rank.pids) std::cout << " " << original << "->" << pid;
    std::cout << "\n";
  }
  return kExitOk;
}

const CommandRegistration registration(40, [](CLI::App& app) -> Runner {
  auto options = std::make_shared<MergeOptions>();
  auto ranks_text = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand(
      "merge", "Put per-rank Chrome/Perfetto traces (.json or .json.gz) on one timeline");
  cmd->add_option("traces", options->inputs, "Per-rank trace files")->required();
  cmd->add_option("-o,--output", options->output, "Merged trace (.json, or .json.gz to compress)")
      ->required();
  // A plain string split here: a CLI11 vector option would swallow the
  // trace files that follow it.
  cmd->add_option("--ranks", *ranks_text,
                  "Rank of each input, comma separated, in order (default: the rank the "
                  "trace states, then rankN in the file name, then the position)");
  cmd->add_flag("--align-starts", options->align_starts,
                "Shift each rank so its first event starts with the earliest rank's (for hosts "
                "whose clocks disagree)");
  return [options, ranks_text] {
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
