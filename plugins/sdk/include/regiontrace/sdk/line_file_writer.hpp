// An append-only file of whole lines (JSONL records, a streamed trace): a
// reader, a crash, a full disk or a forked child never leaves half a line.
//
// Why not stdio: a FILE*'s buffer is copied into a fork()ed child, and a
// child that calls exit() flushes it, writing the parent's records twice.
// This writer keeps its own buffer, writes it with write(2) only in the
// process that opened the file, and writes nothing when asked from another
// one: one file is never written from two processes.
//
// Whole lines: append() takes complete lines; each flush writes the buffered
// lines with one write(2). When that write fails or comes up short (disk
// full, RLIMIT_FSIZE), the file is truncated back to the end of the last
// whole line that reached it and the error is kept (sticky: later appends
// are refused), so the file always ends with '\n'.
//
// Not thread-safe: one thread (a sink's writer thread) owns it.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>

namespace regiontrace::sdk {

class LineFileWriter {
 public:
  enum class Mode { kTruncate, kAppend };
  // Bytes buffered before append() writes them out by itself.
  static constexpr std::size_t kDefaultBufferLimit = 1 << 16;

  LineFileWriter() = default;
  // Opens at once; throws std::runtime_error naming the path.
  explicit LineFileWriter(const std::string& path, Mode mode = Mode::kTruncate) {
    open(path, mode);
  }
  ~LineFileWriter() { close(); }
  LineFileWriter(const LineFileWriter&) = delete;
  LineFileWriter& operator=(const LineFileWriter&) = delete;

  // Creates (or truncates, or appends to) the file. Throws
  // std::runtime_error naming the path when it cannot be opened, and when
  // the name is a symbolic link, a file with other hard links or another
  // user's file: output folders are often shared, and such a name planted
  // there would make a run (as root, say) write over another file. A FIFO
  // or device the user named (/dev/null, a pipe to a reader) is written to;
  // a FIFO no process reads is refused instead of waited on.
  void open(const std::string& path, Mode mode = Mode::kTruncate) {
    close();
    path_ = path;
    error_.clear();
    // Not truncated yet: that waits until the checks passed.
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
    if (fd_ < 0) {
      const int e = errno;
      if (e == ELOOP) refuse(path, "it is a symbolic link");
      if (e == ENXIO) refuse(path, "it is a FIFO that no process reads");
      throw std::runtime_error("cannot create `" + path + "`: " + std::strerror(e));
    }
    struct stat st {};
    if (::fstat(fd_, &st) != 0) {
      const int e = errno;
      ::close(fd_);
      fd_ = -1;
      throw std::runtime_error("cannot create `" + path + "`: " + std::strerror(e));
    }
    const bool regular = S_ISREG(st.st_mode);
    const char* why = regular && st.st_nlink > 1            ? "it has other hard links"
                      : regular && st.st_uid != ::geteuid() ? "it belongs to another user"
                                                            : nullptr;
    if (why != nullptr) {
      ::close(fd_);
      fd_ = -1;
      refuse(path, why);
    }
    ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) & ~O_NONBLOCK);
    if (mode == Mode::kTruncate && regular && st.st_size > 0 && ::ftruncate(fd_, 0) != 0) {
      const int e = errno;
      ::close(fd_);
      fd_ = -1;
      throw std::runtime_error("cannot truncate `" + path + "`: " + std::strerror(e));
    }
    whole_end_ = mode == Mode::kTruncate ? 0 : static_cast<std::uint64_t>(st.st_size);
    if (mode == Mode::kAppend) ::lseek(fd_, 0, SEEK_END);
    owner_ = ::getpid();
  }
  bool is_open() const { return fd_ >= 0; }
  const std::string& path() const { return path_; }

  // Adds one or more complete lines (a missing final '\n' is added, so a
  // line is never continued by the next append). Writes the buffer out once
  // it holds `buffer_limit` bytes. False once the file failed.
  bool append(std::string_view lines) {
    if (fd_ < 0 || failed()) return false;
    buffer_ += lines;
    if (buffer_.empty() || buffer_.back() != '\n') buffer_ += '\n';
    if (buffer_.size() >= buffer_limit_) return flush();
    return true;
  }

  // Writes the buffered lines with one write(2). False once the file failed.
  bool flush() {
    if (fd_ < 0 || failed()) return false;
    if (buffer_.empty()) return true;
    if (::getpid() != owner_) {  // a forked child: the parent writes these
      buffer_.clear();
      return true;
    }
    const char* p = buffer_.data();
    std::size_t left = buffer_.size();
    std::uint64_t reached = 0;  // bytes of this buffer now in the file
    while (left > 0) {
      const ssize_t n = ::write(fd_, p, left);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        const int saved = n < 0 ? errno : ENOSPC;
        cut_back(reached);
        error_ = "cannot write `" + path_ + "`: " + std::strerror(saved);
        buffer_.clear();
        return false;
      }
      p += n;
      left -= static_cast<std::size_t>(n);
      reached += static_cast<std::uint64_t>(n);
    }
    whole_end_ += reached;
    bytes_ += reached;
    buffer_.clear();
    return true;
  }

  // Flushes and closes; idempotent. A close error becomes the error too.
  void close() {
    if (fd_ < 0) return;
    flush();
    if (::close(fd_) != 0 && error_.empty()) {
      error_ = "cannot close `" + path_ + "`: " + std::strerror(errno);
    }
    fd_ = -1;
  }

  void set_buffer_limit(std::size_t bytes) { buffer_limit_ = bytes == 0 ? 1 : bytes; }

  bool failed() const { return !error_.empty(); }
  // The first error ("" when none), naming the file.
  const std::string& error() const { return error_; }
  std::uint64_t bytes_written() const { return bytes_; }

 private:
  [[noreturn]] static void refuse(const std::string& path, const char* why) {
    throw std::runtime_error("refusing to write `" + path + "`: " + why +
                             " (someone else may have put it there); remove it or choose "
                             "another output folder");
  }
  // After a failed or short write: keep the whole lines among the `reached`
  // bytes that made it, cut the torn tail off.
  void cut_back(std::uint64_t reached) {
    std::uint64_t keep = 0;
    for (std::uint64_t i = reached; i > 0; --i) {
      if (buffer_[i - 1] == '\n') {
        keep = i;
        break;
      }
    }
    whole_end_ += keep;
    bytes_ += keep;
    if (keep != reached) {
      while (::ftruncate(fd_, static_cast<off_t>(whole_end_)) != 0 && errno == EINTR) {
      }
    }
  }

  int fd_ = -1;
  pid_t owner_ = 0;
  std::string path_;
  std::string buffer_;
  std::size_t buffer_limit_ = kDefaultBufferLimit;
  std::uint64_t whole_end_ = 0;  // file offset just past the last whole line
  std::uint64_t bytes_ = 0;
  std::string error_;
};

}  // namespace regiontrace::sdk
