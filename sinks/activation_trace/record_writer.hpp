// The activation trace's file: records from the threads that observe tensors
// go through the SDK's bounded queue to its writer thread, which formats
// each batch and appends it as whole JSONL lines (one write(2) per batch, so
// lines are never torn). When the queue is full, submit() waits for room
// (block) or refuses the record and counts it (drop). Every record offered
// gets a sequence number, so dropped ones leave gaps. What is generic (queue,
// thread, sticky error, whole lines) lives in the SDK; this class adds only
// the record format and the closing summary.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "activation_jsonl.hpp"
#include "activation_record.hpp"
#include "regiontrace/sdk/bounded_queue_writer.hpp"
#include "regiontrace/sdk/line_file_writer.hpp"

namespace regiontrace::activation {

class RecordWriter {
 public:
  struct Options {
    std::string path;
    std::size_t capacity = 65536;  // records waiting to be written
    bool drop_when_full = false;
    bool append = false;  // keep what the file holds; records go after it
    std::chrono::milliseconds idle_wakeup{20};
    // Empty: the summary is the JSONL's last line. Otherwise the file it goes
    // to instead, for readers that expect every line to be a record.
    std::string summary_path;
    bool summary = true;  // false: no summary at all
  };

  // Opens (creates, truncates or appends to) the file and starts the writer
  // thread.
  // Throws std::runtime_error naming the path when the file cannot be opened.
  RecordWriter(Options options, RecordFormatter formatter);
  ~RecordWriter();
  RecordWriter(const RecordWriter&) = delete;
  RecordWriter& operator=(const RecordWriter&) = delete;

  // False when the record was not queued: dropped (queue full, on_full:
  // drop), the writer closed, or a write failed.
  bool submit(ActivationRecord&& record);
  // Asks the writer to write what is queued now; does not wait.
  void request_flush() { queue_.request_flush(); }
  // Writes everything submitted before the call; waits for it.
  void flush() { queue_.flush(); }
  // Writes everything, then the summary (last line, or its own file); closes
  // the file. Idempotent. Submissions racing with it are refused.
  void close();

  // Once a write failed: later records are refused. Lock-free.
  bool failed() const { return queue_.failed(); }
  std::string failure() const { return queue_.error(); }
  std::uint64_t dropped() const { return queue_.dropped(); }
  std::uint64_t written() const { return queue_.written(); }
  const std::string& path() const { return options_.path; }

 private:
  void write_batch(std::vector<ActivationRecord>& batch);  // on the writer thread

  const Options options_;
  const RecordFormatter formatter_;
  sdk::LineFileWriter file_;
  // Text written out as it reaches this size: the file's own buffer limit,
  // so each append is one write(2) of text still in the cache.
  static constexpr std::size_t kWriteBytes = sdk::LineFileWriter::kDefaultBufferLimit;
  std::string text_;  // the writer thread's formatting buffer
  std::mutex close_mutex_;
  bool closed_ = false;
  sdk::BoundedQueueWriter<ActivationRecord> queue_;  // last: its thread starts once all is set
};

}  // namespace regiontrace::activation
