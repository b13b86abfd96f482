// The memory sink's writer thread: application threads queue region records
// and snapshot jobs (bounded; what does not fit is counted), the writer
// formats and writes them (memory_rank<r>_pid<p>.jsonl, the Chrome trace,
// snapshot files) and builds the summary.
//
// Thread rules: push() from any thread, never blocks on I/O. flush() from any
// thread: drains what is queued and flushes the files. close() once, last.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "chrome_trace_file.hpp"
#include "leak_detector.hpp"
#include "memory_records.hpp"
#include "memory_settings.hpp"
#include "output_file.hpp"
#include "region_paths.hpp"
#include "region_summary.hpp"
#include "regiontrace/plugin.hpp"

namespace regiontrace::memory {

class MemoryWriter {
 public:
  // Creates the output files; throws std::runtime_error naming the path.
  MemoryWriter(const SinkContext& ctx, const MemorySettings& settings, const RegionPaths& paths);
  ~MemoryWriter();
  MemoryWriter(const MemoryWriter&) = delete;
  MemoryWriter& operator=(const MemoryWriter&) = delete;

  // False (and counted) when the queue is full or the writer closed.
  bool push(RegionRecord&& record);
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
  std::int64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }
  std::string jsonl_path() const { return jsonl_.path(); }

 private:
  void run();
  void drain();  // takes the queue and writes it; process_mutex_ taken inside
  void write_record(const RegionRecord& r);
  void write_snapshot(SnapshotJob& job);
  void note_failure(const std::string& message);

  const SinkContext ctx_;
  const MemorySettings settings_;
  const RegionPaths& paths_;
  const std::size_t capacity_;

  std::mutex queue_mutex_;
  std::condition_variable wake_;
  std::vector<WriterItem> queue_;
  bool accepting_ = true;
  bool stopping_ = false;
  std::atomic<std::int64_t> dropped_{0};

  std::mutex process_mutex_;  // everything below
  OutputFile jsonl_;
  ChromeTraceFile trace_;
  RegionSummary summary_;
  std::string line_;
  std::vector<WriterItem> batch_;

  mutable std::mutex failure_mutex_;
  std::string failure_;
  std::atomic<bool> failed_{false};

  std::thread thread_;
};

}  // namespace regiontrace::memory
