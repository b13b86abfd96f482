// memory_trace_rank<r>_pid<p>.json: a Chrome/Perfetto trace with one span per
// region instance ("ph":"X") and counter tracks ("ph":"C") for the bytes
// libtorch holds per device (at every region entry and exit) and the resident
// set (at every exit), so memory over time shows next to the regions.
// Snapshots appear as instant events. Timestamps: like every trace
// regiontrace writes, microseconds after the top-level baseTimeNanoseconds
// (CLOCK_MONOTONIC, read when the file is opened), written exactly from the
// events' integer nanoseconds: region spans nest in the file as they did in
// the run. The top-level "regiontrace" member (clock_sync.hpp) pairs the
// clocks at open and close, for `regiontrace merge`.
//
// Streamed: events are appended as records arrive to `<name>.partial`;
// close() writes the closing brackets, which is what makes the file valid
// JSON, and only then renames it to its final name. A process killed, or a
// disk that filled, leaves `<name>.partial` with whole events (one a line)
// and never an invalid `.json` under the name the tools open. One event a
// line (the SDK's ChromeTraceWriter), written as whole lines only (its
// LineFileWriter): the last event waits for the next one, which brings the
// comma that ends its line.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "memory_records.hpp"
#include "region_paths.hpp"
#include "regiontrace/sdk/chrome_trace_writer.hpp"
#include "regiontrace/sdk/clock_sync.hpp"
#include "regiontrace/sdk/line_file_writer.hpp"
#include "regiontrace/sdk/sink_context.hpp"

namespace regiontrace::memory {

class ChromeTraceFile {
 public:
  void open(const std::string& path, const SinkContext& context);
  void add_region(const RegionRecord& r, const RegionPaths& paths);
  void add_snapshot(const SnapshotJob& job, const std::string& file_name);
  void flush() { file_.flush(); }
  void close();
  const sdk::LineFileWriter& file() const { return file_; }
  // Why the closed trace did not take its final name, or empty.
  const std::string& rename_error() const { return rename_error_; }

  static constexpr const char* kPartialSuffix = ".partial";

 private:
  void write(std::string_view text);
  sdk::LineFileWriter file_;
  std::string final_path_;
  std::string rename_error_;
  std::string partial_;  // the last event's line, waiting for its end
  SinkContext context_;
  sdk::clock_sync::Pair clock_start_;
  std::int64_t base_ns_ = 0;                     // CLOCK_MONOTONIC of ts 0
  std::optional<sdk::ChromeTraceWriter> trace_;  // from open()
  long pid_ = 0;
  bool closed_ = false;
};

}  // namespace regiontrace::memory
