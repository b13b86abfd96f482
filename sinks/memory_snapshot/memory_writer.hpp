// The memory sink's writer: application threads queue region records and
// snapshot jobs on the SDK's bounded queue (records that do not fit are
// counted; snapshot jobs, rare, always fit), its writer thread formats and
// writes them (memory_rank<r>_pid<p>.jsonl and the Chrome trace as whole
// lines, snapshot files whole or not at all) and builds the summary.
//
// Thread rules: push() from any thread, never blocks on I/O. flush() from any
// thread: waits until what is queued is written and the files flushed.
// close() once, last. Every file is touched by the writer thread only, and
// by close() after that thread has stopped.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "chrome_trace_file.hpp"
#include "leak_detector.hpp"
#include "memory_records.hpp"
#include "memory_settings.hpp"
#include "region_paths.hpp"
#include "region_summary.hpp"
#include "regiontrace/plugin.hpp"
#include "regiontrace/sdk/bounded_queue_writer.hpp"
#include "regiontrace/sdk/line_file_writer.hpp"

namespace regiontrace::memory {

class MemoryWriter {
 public:
  // Creates the output files; throws std::runtime_error naming the path.
  // `ctx`, `settings` and `paths` must outlive the writer.
  MemoryWriter(const SinkContext& ctx, const MemorySettings& settings, const RegionPaths& paths);
  ~MemoryWriter();
  MemoryWriter(const MemoryWriter&) = delete;
  MemoryWriter& operator=(const MemoryWriter&) = delete;

  // False (and counted) when the queue is full or the writer closed.
  bool push(RegionRecord&& record);
  // A WriterItem holding a RegionRecord, built in place by the caller.
  bool push(WriterItem&& record) { return queue_.push(std::move(record)); }
  void push(std::unique_ptr<SnapshotJob> job);
  void flush();

  struct Closing {
    std::string table;                  // for the log
    std::vector<std::string> suspects;  // leak suspect paths
    std::string summary_file;
  };
  // Drains, stops the thread, writes the summary and closes every file.
  Closing close(RunTotals totals);

  // The first write error ("" when none): the sink then switches itself off.
  std::string failure() const;
  // Whether there is one: an atomic load, for every region event (failure()
  // locks the queue and copies the message).
  bool failed() const { return queue_.failed(); }
  // Records refused: queue full, or the writer closed or failed.
  std::int64_t dropped() const {
    return static_cast<std::int64_t>(queue_.dropped() + queue_.refused()) -
           markers_refused_.load(std::memory_order_relaxed);
  }

 private:
  void write_batch(std::vector<WriterItem>& batch);  // on the writer thread
  void sync();                                       // on the writer thread
  void write_record(const RegionRecord& r);
  void write_snapshot(SnapshotJob& job);
  void throw_if_files_failed() const;

  // The sink's own (it outlives the writer): no copy per instance.
  const SinkContext& ctx_;
  const MemorySettings& settings_;
  const RegionPaths& paths_;

  // Writer thread only; freed by close() (the writer outlives it).
  std::unique_ptr<sdk::LineFileWriter> jsonl_;
  std::unique_ptr<ChromeTraceFile> trace_;
  RegionSummary summary_;
  std::string line_;
  std::atomic<bool> releasing_{false};            // close() has begun
  std::atomic<std::int64_t> markers_refused_{0};  // close()'s markers: not records

  sdk::BoundedQueueWriter<WriterItem> queue_;  // last: its thread starts once all is set
};

}  // namespace regiontrace::memory
