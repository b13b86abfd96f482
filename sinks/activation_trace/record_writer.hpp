// The bounded queue between the threads that observe tensors and the one
// thread that formats and writes the JSONL file.
//
// Producers (any thread) call submit(): a lock, a move, no system call in
// the common case. The writer thread wakes when the queue is half full, when
// a flush is asked, or every `idle_wakeup`, takes the whole queue at once,
// formats it outside the lock and writes it with one write(2) per batch, so
// lines are never torn. When the queue holds `capacity` records, submit()
// waits for room (block) or refuses the record and counts it (drop). Every
// record offered gets a sequence number, so dropped ones leave gaps.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "activation_record.hpp"
#include "record_format.hpp"

namespace regiontrace::activation {

class RecordWriter {
 public:
  struct Options {
    std::string path;
    std::size_t capacity = 65536;  // records waiting to be written
    bool drop_when_full = false;
    std::chrono::milliseconds idle_wakeup{20};
    // Empty: the summary is the JSONL's last line. Otherwise the file it goes
    // to instead, for readers that expect every line to be a record.
    std::string summary_path;
  };

  // Opens (creates or truncates) the file and starts the writer thread.
  // Throws std::runtime_error naming the path when the file cannot be opened.
  RecordWriter(Options options, RecordFormatter formatter);
  ~RecordWriter();
  RecordWriter(const RecordWriter&) = delete;
  RecordWriter& operator=(const RecordWriter&) = delete;

  // False when the record was dropped (queue full, on_full: drop) or the
  // writer is closed.
  bool submit(ActivationRecord&& record);
  // Asks the writer to write what is queued now; does not wait.
  void request_flush();
  // Writes everything submitted before the call; waits for it.
  void flush();
  // Writes everything, then the summary (last line, or its own file); closes
  // the file. Idempotent.
  // Submissions racing with it are refused.
  void close();

  // Once a write failed: the writer then discards what it takes.
  bool failed() const { return failed_.load(std::memory_order_relaxed); }
  std::string failure() const;
  std::uint64_t dropped() const;
  std::uint64_t written() const;
  const std::string& path() const { return options_.path; }

 private:
  void run();
  void write_all(const std::string& bytes);

  const Options options_;
  const RecordFormatter formatter_;
  const std::size_t wake_threshold_;
  int fd_ = -1;

  mutable std::mutex mutex_;
  std::condition_variable work_;   // writer waits: records, flush, stop
  std::condition_variable space_;  // blocked producers wait for room
  std::condition_variable done_;   // flush() waits for the writer
  std::vector<ActivationRecord> pending_;
  std::uint64_t next_seq_ = 0;
  std::uint64_t dropped_ = 0;
  std::uint64_t written_ = 0;
  std::uint64_t flush_wanted_ = 0;
  std::uint64_t flush_done_ = 0;
  bool stopping_ = false;
  bool writer_exited_ = false;
  bool closed_ = false;
  std::string failure_;
  std::atomic<bool> failed_{false};
  std::thread thread_;
};

}  // namespace regiontrace::activation
