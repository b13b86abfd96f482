// A file that appears whole or not at all (a summary, a snapshot, a trace
// written at the end): bytes go to a temporary file in the same folder (so
// the final rename stays on one file system and is atomic), optionally
// fsync'ed, then renamed over the final name. A reader, a crash or a signal
// never sees half a file under the final name, and when writing fails the
// file that was there before is left as it was.
//
// Errors name the final file, which is what the user asked for; the
// temporary file is removed on every failure path and by the destructor
// when commit() was not reached.
//
// Not thread-safe: one thread owns a writer.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

namespace regiontrace::sdk {

struct WholeFileOptions {
  // fsync before the rename: the content survives a power cut, not only a
  // crash. Costs a disk round trip, so off unless asked.
  bool fsync = false;
};

class WholeFileWriter {
 public:
  using Options = WholeFileOptions;

  // Creates the temporary file. Throws std::runtime_error naming `path`.
  explicit WholeFileWriter(std::string path) : WholeFileWriter(std::move(path), Options{}) {}
  WholeFileWriter(std::string path, Options options) : path_(std::move(path)), options_(options) {
    static std::atomic<unsigned> counter{0};
    tmp_path_ = path_ + ".tmp" + std::to_string(::getpid()) + "." +
                std::to_string(counter.fetch_add(1, std::memory_order_relaxed));
    fd_ = ::open(tmp_path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd_ < 0) {
      throw std::runtime_error("cannot create `" + path_ + "` (temporary `" + tmp_path_ +
                               "`): " + std::strerror(errno));
    }
  }
  ~WholeFileWriter() {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_) ::unlink(tmp_path_.c_str());
  }
  WholeFileWriter(const WholeFileWriter&) = delete;
  WholeFileWriter& operator=(const WholeFileWriter&) = delete;

  // Buffers and writes; an error is kept for commit() to report.
  void write(std::string_view bytes) {
    if (errno_ != 0 || bytes.empty()) return;
    bytes_ += bytes.size();
    if (buffer_.size() + bytes.size() < kBufferLimit) {
      buffer_ += bytes;
      return;
    }
    write_buffer();
    if (bytes.size() >= kBufferLimit) {
      write_all(bytes);
    } else {
      buffer_ += bytes;
    }
  }

  // Writes what is buffered, fsyncs when asked, closes and renames into
  // place. Throws std::runtime_error naming the final file on any error;
  // the old file, if any, is then untouched.
  void commit() {
    if (committed_) return;
    write_buffer();
    if (errno_ == 0 && options_.fsync && ::fsync(fd_) != 0) errno_ = errno;
    if (::close(fd_) != 0 && errno_ == 0) errno_ = errno;
    fd_ = -1;
    if (errno_ != 0) {
      ::unlink(tmp_path_.c_str());
      committed_ = true;  // nothing left to remove
      // A system_error (a runtime_error) with the errno: a caller can tell
      // a full disk (ENOSPC, EDQUOT, EFBIG) from other failures.
      throw std::system_error(errno_, std::generic_category(), "cannot write `" + path_ + "`");
    }
    if (std::rename(tmp_path_.c_str(), path_.c_str()) != 0) {
      const int e = errno;
      ::unlink(tmp_path_.c_str());
      committed_ = true;
      throw std::runtime_error("cannot rename `" + tmp_path_ + "` to `" + path_ +
                               "`: " + std::strerror(e));
    }
    committed_ = true;
  }

  const std::string& path() const { return path_; }
  std::uint64_t bytes_written() const { return bytes_; }
  // The errno of the first failed write, 0 while none failed: a long
  // writer can stop early instead of formatting what commit() would refuse.
  int error() const { return errno_; }

  // The whole file in one call. Returns "" or the error (naming `path`);
  // never throws, for writer threads that report errors as values.
  static std::string write_file(const std::string& path, std::string_view bytes,
                                Options options = {}) {
    try {
      WholeFileWriter f(path, options);
      f.write(bytes);
      f.commit();
      return {};
    } catch (const std::exception& e) {
      return e.what();
    }
  }

 private:
  static constexpr std::size_t kBufferLimit = 1 << 18;

  void write_buffer() {
    if (!buffer_.empty()) write_all(buffer_);
    buffer_.clear();
  }
  void write_all(std::string_view bytes) {
    while (errno_ == 0 && !bytes.empty()) {
      const ssize_t n = ::write(fd_, bytes.data(), bytes.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        errno_ = n < 0 ? errno : ENOSPC;
        return;
      }
      bytes.remove_prefix(static_cast<std::size_t>(n));
    }
  }

  std::string path_;
  std::string tmp_path_;
  Options options_;
  int fd_ = -1;
  std::string buffer_;
  std::uint64_t bytes_ = 0;
  int errno_ = 0;
  bool committed_ = false;
};

}  // namespace regiontrace::sdk
