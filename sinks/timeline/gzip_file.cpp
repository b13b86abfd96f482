#include "gzip_file.hpp"

#include <zlib.h>

#include <algorithm>
#include <stdexcept>
#include <system_error>
#include <vector>

namespace regiontrace::timeline {

struct GzipFile::Deflate {
  z_stream stream{};
  std::vector<unsigned char> out = std::vector<unsigned char>(1 << 18);
  bool ended = false;
  ~Deflate() {
    if (!ended) deflateEnd(&stream);
  }
};

GzipFile::GzipFile(std::string path) : file_(std::move(path)), deflate_(new Deflate) {
  // windowBits 15 + 16: a gzip header, what `.gz` readers expect.
  if (deflateInit2(&deflate_->stream, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    deflate_->ended = true;
    throw std::runtime_error("cannot start gzip compression for `" + file_.path() + "`");
  }
}

GzipFile::~GzipFile() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void GzipFile::compress_loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    changed_.wait(lock, [this] { return busy_ || stop_; });
    if (!busy_) return;
    lock.unlock();
    std::string failure;
    try {
      compress(pending_);
    } catch (const std::exception& e) {
      failure = e.what();
    }
    lock.lock();
    if (!failure.empty() && error_.empty()) error_ = failure;
    busy_ = false;
    changed_.notify_all();
  }
}

void GzipFile::wait_idle(std::unique_lock<std::mutex>& lock) {
  changed_.wait(lock, [this] { return !busy_; });
  if (!error_.empty()) throw std::runtime_error(error_);
  // Idle: the compressing thread does not touch the file now. A full disk
  // stops the trace here rather than after formatting all of it.
  if (file_.error() != 0) {
    throw std::system_error(file_.error(), std::generic_category(),
                            "cannot write `" + file_.path() + "`");
  }
}

void GzipFile::take(std::string& text) {
  if (text.empty()) return;
  if (!thread_.joinable()) thread_ = std::thread([this] { compress_loop(); });
  std::unique_lock<std::mutex> lock(mutex_);
  wait_idle(lock);
  bytes_ += text.size();
  pending_.swap(text);
  text.clear();
  busy_ = true;
  changed_.notify_all();
}

void GzipFile::deflate_into_file(int flush) {
  z_stream& zs = deflate_->stream;
  for (;;) {
    zs.next_out = deflate_->out.data();
    zs.avail_out = static_cast<uInt>(deflate_->out.size());
    const int rc = deflate(&zs, flush);
    if (rc == Z_STREAM_ERROR) throw std::runtime_error("gzip compression failed");
    const std::size_t produced = deflate_->out.size() - zs.avail_out;
    file_.write(std::string_view(reinterpret_cast<const char*>(deflate_->out.data()), produced));
    if (flush == Z_FINISH ? rc == Z_STREAM_END : zs.avail_out != 0) return;
  }
}

void GzipFile::compress(std::string_view text) {
  while (!text.empty()) {
    const std::size_t n = std::min<std::size_t>(text.size(), std::size_t{1} << 30);
    deflate_->stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
    deflate_->stream.avail_in = static_cast<uInt>(n);
    deflate_into_file(Z_NO_FLUSH);
    text.remove_prefix(n);
  }
}

void GzipFile::commit() {
  {
    std::unique_lock<std::mutex> lock(mutex_);
    wait_idle(lock);
  }
  if (!deflate_->ended) {
    deflate_->stream.next_in = nullptr;
    deflate_->stream.avail_in = 0;
    deflate_into_file(Z_FINISH);
    deflateEnd(&deflate_->stream);
    deflate_->ended = true;
  }
  file_.commit();
}

}  // namespace regiontrace::timeline
