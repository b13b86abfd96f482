// Turns a finished collection window into files: the trace (written from
// the collected events, with the sink's spans and markers, on every libtorch
// version), the op summaries its layout asks for, then keep_last.
// Runs on the sink's writer thread.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "profiler_session.hpp"
#include "regiontrace/sdk/sink_context.hpp"
#include "torch_profiler_settings.hpp"
#include "torch_trace_writer.hpp"
#include "trace_model.hpp"

namespace regiontrace::torch_profiler {

struct ExportRequest {
  CollectedProfilePtr profile;
  TraceData data;  // everything but the ops, which are read from `profile`
  std::map<std::uint64_t, std::uint64_t> trace_tids;  // RecordFunction id -> trace tid
  std::string path_base;  // "<dir>/torch_trace_rank0_pid42": extensions are added
                          // (FastVideo's layout: "<dir>/<host>_<pid>.<ns>")
};

// ".pt.trace.json[.gz]": the suffix TensorBoard's profiler plugin and
// HolisticTraceAnalysis users glob for in a folder of torch traces.
inline const char* trace_extension(bool gzip) {
  return gzip ? ".pt.trace.json.gz" : ".pt.trace.json";
}

struct ExportOptions {
  bool gzip = true;
  TraceLimits limits;
  std::int64_t keep_last = 0;
  std::string output_dir;
  int rank = 0;
  long pid = 0;
  Layout layout = Layout::kRegiontrace;
};

using ExportLog = std::function<void(LogLevel, const std::string&)>;

// Never throws: trouble is logged. Returns the trace's path, empty on failure.
std::string export_trace(ExportRequest& request, const ExportOptions& options,
                         const ExportLog& log);

}  // namespace regiontrace::torch_profiler
