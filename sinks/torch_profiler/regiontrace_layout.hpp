// The output folder of the regiontrace layout (the default): the traces,
// "<dir>/torch_trace_rank<r>_pid<p>[.<step>].pt.trace.json.gz", and in
// "<dir>/summaries/" each trace's op summary under the trace's name,
// ".summary.txt" and ".summary.json". The folder itself keeps to traces:
// HolisticTraceAnalysis takes every *.json and *.gz of the folder it is
// given for a trace (and one without a rank for rank 0), TensorBoard's
// plugin reads the folder's *.pt.trace.json[.gz]; both load it as it is.
// (The configuration snapshots core writes go to "<dir>/regiontrace_config/".)
#pragma once

#include <filesystem>
#include <string>

namespace regiontrace::torch_profiler {

inline constexpr const char* kSummaryFolder = "summaries";

// "<dir>/summaries/<the trace's name without extension>" for the trace
// whose path without extension is `path_base`: add ".summary.txt" or
// ".summary.json".
inline std::string summary_stem(const std::string& dir, const std::string& path_base) {
  return (std::filesystem::path(dir) / kSummaryFolder / std::filesystem::path(path_base).filename())
      .string();
}

}  // namespace regiontrace::torch_profiler
