#include "record_writer.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace regiontrace::activation {

RecordWriter::RecordWriter(Options options, RecordFormatter formatter)
    : options_(std::move(options)),
      formatter_(std::move(formatter)),
      wake_threshold_(std::max<std::size_t>(1, options_.capacity / 2)) {
  fd_ = ::open(options_.path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    throw std::runtime_error("cannot open output `" + options_.path + "`: " + std::strerror(errno));
  }
  pending_.reserve(std::min<std::size_t>(options_.capacity, 1024));
  thread_ = std::thread([this] { run(); });
}

RecordWriter::~RecordWriter() {
  close();
}

bool RecordWriter::submit(ActivationRecord&& record) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (closed_) return false;
  if (pending_.size() >= options_.capacity) {
    if (options_.drop_when_full) {
      ++dropped_;
      ++next_seq_;
      return false;
    }
    work_.notify_one();
    space_.wait(lock, [this] { return pending_.size() < options_.capacity || closed_; });
    if (closed_) return false;
  }
  record.seq = next_seq_++;
  pending_.push_back(std::move(record));
  // Only a filling queue wakes the writer early: no system call per record.
  if (pending_.size() == wake_threshold_) work_.notify_one();
  return true;
}

void RecordWriter::request_flush() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (closed_) return;
  ++flush_wanted_;
  work_.notify_one();
}

void RecordWriter::flush() {
  std::unique_lock<std::mutex> lock(mutex_);
  if (closed_) return;
  const std::uint64_t ticket = ++flush_wanted_;
  work_.notify_one();
  done_.wait(lock, [&] { return flush_done_ >= ticket || writer_exited_; });
}

void RecordWriter::close() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (closed_) return;
    closed_ = true;
    stopping_ = true;
    work_.notify_one();
    space_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
  TraceSummary summary;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    summary.records = written_;
    summary.dropped = dropped_;
  }
  std::string line;
  formatter_.append_summary(line, summary);
  if (options_.summary_path.empty()) {
    write_all(line);
  } else {
    std::ofstream out(options_.summary_path, std::ios::trunc);
    out << line;
  }
  ::close(fd_);
  fd_ = -1;
}

std::string RecordWriter::failure() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return failure_;
}

std::uint64_t RecordWriter::dropped() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return dropped_;
}

std::uint64_t RecordWriter::written() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return written_;
}

void RecordWriter::run() {
  std::vector<ActivationRecord> batch;
  batch.reserve(std::min<std::size_t>(options_.capacity, 1024));
  std::string text;
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    work_.wait_for(lock, options_.idle_wakeup, [this] {
      return stopping_ || flush_wanted_ > flush_done_ || pending_.size() >= wake_threshold_;
    });
    const bool stop = stopping_;
    const std::uint64_t ticket = flush_wanted_;
    batch.swap(pending_);  // pending_ gets the emptied vector of the last batch
    space_.notify_all();
    lock.unlock();
    for (const ActivationRecord& r : batch) formatter_.append(text, r);
    if (!text.empty()) write_all(text);
    const std::size_t count = batch.size();
    batch.clear();
    text.clear();
    lock.lock();
    if (failure_.empty()) written_ += count;
    if (ticket > flush_done_) {
      flush_done_ = ticket;
      done_.notify_all();
    }
    if (stop && pending_.empty()) break;
  }
  writer_exited_ = true;
  done_.notify_all();
}

void RecordWriter::write_all(const std::string& bytes) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!failure_.empty()) return;
  }
  const char* p = bytes.data();
  std::size_t left = bytes.size();
  while (left > 0) {
    const ssize_t n = ::write(fd_, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      std::lock_guard<std::mutex> lock(mutex_);
      failure_ = "writing `" + options_.path + "` failed: " + std::strerror(errno);
      failed_.store(true);
      return;
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
}

}  // namespace regiontrace::activation
