#include "textfile_exporter.hpp"

#include <chrono>
#include <stdexcept>

#include "regiontrace/sdk/whole_file_writer.hpp"

namespace regiontrace::region_stats {

TextfileExporter::TextfileExporter(std::string path, double interval_s, Render render,
                                   Report report)
    : path_(std::move(path)),
      interval_s_(interval_s),
      render_(std::move(render)),
      report_(std::move(report)) {
  const std::string error = write_now();
  if (!error.empty()) throw std::runtime_error(error);
  if (interval_s_ > 0) thread_ = std::thread([this] { run(); });
}

TextfileExporter::~TextfileExporter() {
  stop();
}

std::string TextfileExporter::write_now() {
  return sdk::WholeFileWriter::write_file(path_, render_());
}

void TextfileExporter::run() {
  const auto interval = std::chrono::duration<double>(interval_s_);
  std::unique_lock<std::mutex> lock(mutex_);
  std::string last_error;
  while (!wake_.wait_for(lock, interval, [this] { return stopping_; })) {
    lock.unlock();
    const std::string error = write_now();
    // Reported once per distinct problem: a full disk must not flood the log.
    if (!error.empty() && error != last_error) report_(error);
    last_error = error;
    lock.lock();
  }
}

void TextfileExporter::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopped_) return;
    stopped_ = true;
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  const std::string error = write_now();
  if (!error.empty()) report_(error);
}

}  // namespace regiontrace::region_stats
