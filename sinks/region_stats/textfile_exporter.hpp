// Writes the metrics for node_exporter's textfile collector: the whole file
// replaced atomically (temporary file + rename, so the collector never reads
// half of it), every `interval_s` on a thread of its own and once more at
// stop().
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace regiontrace::region_stats {

class TextfileExporter {
 public:
  using Render = std::function<std::string()>;
  using Report = std::function<void(const std::string& error)>;
  // Writes once now and throws std::runtime_error naming the file when that
  // fails, so a bad path stops start-up rather than the first interval.
  TextfileExporter(std::string path, double interval_s, Render render, Report report);
  ~TextfileExporter();
  // Joins the thread and writes the final content; idempotent.
  void stop();

 private:
  std::string write_now();
  void run();

  const std::string path_;
  const double interval_s_;
  Render render_;
  Report report_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  bool stopped_ = false;
  std::thread thread_;
};

}  // namespace regiontrace::region_stats
