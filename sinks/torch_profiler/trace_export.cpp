#include "trace_export.hpp"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <thread>

#include "device_windows.hpp"
#include "fastvideo_layout.hpp"
#include "op_summary.hpp"
#include "profiler_result.hpp"
#include "regiontrace/sdk/clock_sync.hpp"
#include "regiontrace/sdk/whole_file_writer.hpp"
#include "regiontrace_layout.hpp"
#include "trace_file.hpp"
#include "trace_retention.hpp"

namespace regiontrace::torch_profiler {
namespace {

// A span still open when its window ended stops at the window's end, but an
// op running then was recorded to its real end: the span covers it.
void cover_ops_running_at_the_end(TraceData& data) {
  for (RegionSpan& span : data.spans) {
    if (!span.open_at_end) continue;
    for (const OpRecord& op : data.ops) {
      if (op.kind == OpRecord::Kind::kCpuOp && op.thread == span.thread &&
          op.start_ns >= span.start_ns && op.start_ns <= span.end_ns) {
        span.end_ns = std::max(span.end_ns, op.start_ns + op.duration_ns);
      }
    }
  }
}

}  // namespace

std::string export_trace(ExportRequest& req, const ExportOptions& options, const ExportLog& log) {
  const std::string path = req.path_base + trace_extension(options.gzip);
  const std::string file = std::filesystem::path(path).filename().string();
  try {
    std::vector<ThreadInfo> unknown;
    req.data.ops = read_ops(*req.profile, req.trace_tids, &unknown);
    req.data.threads.insert(req.data.threads.end(), unknown.begin(), unknown.end());
    const DeviceFilterStats device = keep_device_activity_in_windows(req.data);
    if (device.runtime_calls_left_out + device.device_records_left_out > 0) {
      log(LogLevel::kDebug, file + ": left out " + std::to_string(device.runtime_calls_left_out) +
                                " CUDA runtime calls and " +
                                std::to_string(device.device_records_left_out) +
                                " device records launched outside the selected regions");
    }
    cover_ops_running_at_the_end(req.data);

    req.data.clock_end = sdk::clock_sync::read();
    req.data.trace_name = path;
    TraceFile out(path, options.gzip, kTraceGzipLevel);
    out.on_progress([&](std::uint64_t bytes, double seconds) {
      char said[96];
      std::snprintf(said, sizeof(said), ": %.0f MB of JSON written in %.1f s, going on",
                    static_cast<double>(bytes) / 1e6, seconds);
      log(LogLevel::kInfo, "writing " + file + said);
    });
    const TraceWriteStats stats = write_chrome_trace(req.data, options.limits, out);
    out.commit();
    // libtorch's copy of the events is no longer needed; freeing it takes as
    // long as the summaries below (0.4 s for 1M ops), so the two overlap.
    std::thread freeing([profile = std::move(req.profile)]() mutable { profile.reset(); });
    struct Joined {
      std::thread& t;
      ~Joined() { t.join(); }
    } joined{freeing};

    const OpSummary summary = summarize(req.data);
    std::vector<std::pair<std::string, std::string>> summaries;  // path, text
    std::string beside;
    if (options.layout == Layout::kRegiontrace) {
      // In summaries/, named as the trace (regiontrace_layout.hpp): the
      // folder itself keeps to what HTA and TensorBoard load.
      const std::string stem = summary_stem(options.output_dir, req.path_base);
      summaries = {{stem + ".summary.txt", summary_text(summary, req.data, file)},
                   {stem + ".summary.json", summary_json(summary, req.data, file)}};
      beside = " and " + std::string(kSummaryFolder) + "/" +
               std::filesystem::path(stem).filename().string() + ".summary.txt/.json";
      std::error_code ec;  // a folder that cannot be made: the writer below says so
      std::filesystem::create_directories(std::filesystem::path(stem).parent_path(), ec);
    } else if (options.layout == Layout::kFastVideo) {
      // One pair per rank, as FastVideo's: a later window's replaces it.
      const std::string stem = fastvideo_summary_stem(options.output_dir, options.rank);
      summaries = {{stem + ".txt", summary_text(summary, req.data, file)},
                   {stem + ".json", fastvideo_summary_json(req.data)}};
      beside = " and " + std::filesystem::path(stem).filename().string() + ".txt/.json";
    }
    for (const auto& [summary_path, text] : summaries) {
      sdk::WholeFileWriter out(summary_path);
      out.write(text);
      out.commit();
    }

    std::string msg = "wrote " + path + " (" + std::to_string(summary.op_calls) + " op calls, " +
                      std::to_string(req.data.spans.size()) + " region spans";
    if (stats.events_written > 0) msg += ", " + std::to_string(stats.events_written) + " events";
    log(LogLevel::kInfo, msg + ")" + beside);
    if (!stats.cut_reason.empty()) {
      log(LogLevel::kWarn, file + ": " + stats.cut_reason + " reached while writing: the " +
                               std::to_string(stats.events_cut) +
                               " latest events were left out; the trace is complete up to there");
    }
    const std::vector<std::string> removed_files =
        options.layout == Layout::kFastVideo
            ? remove_old_fastvideo_traces(options.output_dir, options.pid, options.keep_last)
            : remove_old_traces(options.output_dir, options.rank, options.keep_last);
    for (const std::string& removed : removed_files) {
      log(LogLevel::kInfo,
          "keep_last=" + std::to_string(options.keep_last) + ": removed " + removed);
    }
    return path;
  } catch (const std::exception& e) {
    log(LogLevel::kError, "could not write " + path + ": " + e.what());
    return {};
  }
}

}  // namespace regiontrace::torch_profiler
