#include "gzip_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <system_error>

#include "read_progress.hpp"

namespace regiontrace::cli {
namespace {

constexpr std::size_t kFlushBytes = 4 << 20;

std::runtime_error io_error(const std::string& path, const std::string& what) {
  return std::runtime_error(path + ": " + what);
}

// Reads the file into a buffer with room for simdjson's padding after it, so
// the (often hundreds of MB) text is never copied to grow it.
std::string read_raw(const std::string& path) {
  const int fd = open_input_file(path);
  std::FILE* file = fdopen(fd, "rb");
  if (file == nullptr) {
    const int error = errno;
    close(fd);
    throw io_error(path, std::strerror(error));
  }
  std::string bytes;
  struct stat info {};
  if (fstat(fd, &info) != 0) {
    std::fclose(file);
    throw io_error(path, std::strerror(errno));
  }
  if (static_cast<std::uint64_t>(info.st_size) > max_input_bytes()) {
    std::fclose(file);
    throw std::runtime_error(input_too_large(path));
  }
  bytes.reserve(static_cast<std::size_t>(info.st_size) + simdjson::SIMDJSON_PADDING);
  ReadProgress progress(path, static_cast<std::uint64_t>(info.st_size));
  char chunk[1 << 16];
  std::size_t n = 0;
  while ((n = std::fread(chunk, 1, sizeof(chunk), file)) > 0) {
    bytes.append(chunk, n);
    progress.advance(n);
  }
  const bool failed = std::ferror(file) != 0;
  std::fclose(file);
  if (failed) throw io_error(path, "read error");
  return bytes;
}

bool is_gzip(const std::string& bytes) {
  return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
         static_cast<unsigned char>(bytes[1]) == 0x8b;
}

// Inflates every gzip member (concatenated .gz files are valid gzip).
std::string inflate_gzip(const std::string& path, const std::string& compressed) {
  z_stream zs{};
  if (inflateInit2(&zs, 15 + 16) != Z_OK) throw io_error(path, "zlib initialisation failed");
  std::string out;
  const std::uint64_t limit = max_input_bytes();
  out.reserve(std::min<std::uint64_t>(compressed.size() * 6, limit));
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(compressed.data()));
  zs.avail_in = static_cast<uInt>(compressed.size());
  char chunk[1 << 16];
  int rc = Z_OK;
  for (;;) {
    zs.next_out = reinterpret_cast<Bytef*>(chunk);
    zs.avail_out = sizeof(chunk);
    rc = inflate(&zs, Z_NO_FLUSH);
    out.append(chunk, sizeof(chunk) - zs.avail_out);
    if (out.size() > limit) {
      inflateEnd(&zs);
      throw std::runtime_error(input_too_large(path));
    }
    // Traces compress 5-50:1; past 64 MiB, text inflating more than 300
    // times the bytes it came from is a bomb, refused long before the limit.
    const std::size_t consumed = compressed.size() - zs.avail_in;
    if (out.size() > (std::size_t{64} << 20) && out.size() / 300 > consumed) {
      inflateEnd(&zs);
      throw io_error(path, "inflates more than 300 times (" + std::to_string(consumed) +
                               " bytes became " + std::to_string(out.size() >> 20) +
                               " MiB): a gzip bomb, not a trace");
    }
    if (rc == Z_STREAM_END) {
      if (zs.avail_in == 0) break;
      inflateReset(&zs);  // another member follows
      continue;
    }
    if (rc != Z_OK) break;
    if (zs.avail_in == 0 && zs.avail_out != 0) break;  // input ended mid-stream
  }
  inflateEnd(&zs);
  if (rc != Z_STREAM_END) {
    throw io_error(path, std::string("damaged or truncated gzip data") +
                             (zs.msg != nullptr ? std::string(" (") + zs.msg + ")" : ""));
  }
  return out;
}

}  // namespace

int open_input_file(const std::string& path) {
  // O_NONBLOCK: opening a FIFO nobody writes to returns at once instead of
  // waiting for a writer; the type is checked before any read.
  const int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) throw io_error(path, std::strerror(errno));
  struct stat info {};
  if (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    const bool folder = S_ISDIR(info.st_mode);
    close(fd);
    throw io_error(path, folder ? "is a folder, not a trace file"
                                : "is not a regular file (a FIFO, device or socket)");
  }
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

std::uint64_t max_input_bytes() {
  const char* v = std::getenv("REGIONTRACE_MAX_INPUT_MB");
  std::uint64_t mb = 4096;
  if (v != nullptr && *v != '\0') {
    char* end = nullptr;
    const unsigned long long parsed = std::strtoull(v, &end, 10);
    if (end != nullptr && *end == '\0' && parsed > 0) mb = parsed;
  }
  return mb << 20;
}

std::string input_too_large(const std::string& path) {
  return path + ": holds more than " + std::to_string(max_input_bytes() >> 20) +
         " MiB of text once inflated (a gzip bomb, or a trace larger than this tool reads "
         "whole; REGIONTRACE_MAX_INPUT_MB raises the limit)";
}

PaddedText::PaddedText(std::string bytes) : buffer_(std::move(bytes)), size_(buffer_.size()) {
  buffer_.append(simdjson::SIMDJSON_PADDING, '\0');
}

simdjson::padded_string_view PaddedText::padded(std::size_t offset, std::size_t length) const {
  return simdjson::padded_string_view(buffer_.data() + offset, length, buffer_.size() - offset);
}

PaddedText read_text_file(const std::string& path) {
  std::string bytes = read_raw(path);
  if (is_gzip(bytes)) bytes = inflate_gzip(path, bytes);
  return PaddedText(std::move(bytes));
}

struct DecodedInput::Inflater {
  z_stream zs{};
};

DecodedInput::DecodedInput(const std::string& path) : path_(path), fd_(open_input_file(path)) {
  try {
    struct stat info {};
    if (fstat(fd_, &info) == 0) {
      progress_ = std::make_unique<ReadProgress>(path, static_cast<std::uint64_t>(info.st_size));
    }
    while (raw_.size() < 2 && refill()) {
    }
    gzip_ = is_gzip(raw_);
    if (gzip_) {
      inflater_ = new Inflater();
      if (inflateInit2(&inflater_->zs, 15 + 16) != Z_OK) {
        throw io_error(path, "zlib initialisation failed");
      }
    }
  } catch (...) {
    delete inflater_;
    ::close(fd_);
    throw;
  }
}

DecodedInput::~DecodedInput() {
  if (inflater_ != nullptr) {
    inflateEnd(&inflater_->zs);
    delete inflater_;
  }
  ::close(fd_);
}

bool DecodedInput::refill() {
  if (at_end_) return false;
  if (raw_pos_ > 0) {
    raw_.erase(0, raw_pos_);
    raw_pos_ = 0;
  }
  const std::size_t old = raw_.size();
  raw_.resize(old + (1 << 18));
  ssize_t n = 0;
  do {
    n = ::read(fd_, &raw_[old], raw_.size() - old);
  } while (n < 0 && errno == EINTR);
  if (n < 0) {
    const int e = errno;
    raw_.resize(old);
    throw io_error(path_, std::strerror(e));
  }
  raw_.resize(old + static_cast<std::size_t>(n));
  if (progress_) progress_->advance(static_cast<std::uint64_t>(n));
  if (n == 0) at_end_ = true;
  return n > 0;
}

std::size_t DecodedInput::read(char* out, std::size_t size) {
  if (!gzip_) {
    if (raw_pos_ == raw_.size() && !refill()) return 0;
    const std::size_t n = std::min(size, raw_.size() - raw_pos_);
    std::memcpy(out, raw_.data() + raw_pos_, n);
    raw_pos_ += n;
    return n;
  }
  z_stream& zs = inflater_->zs;
  for (;;) {
    if (raw_pos_ == raw_.size() && !refill()) {
      if (stream_end_) return 0;  // the last member ended with the file
      throw io_error(path_, "damaged or truncated gzip data (unexpected end of file)");
    }
    if (stream_end_) {
      // Bytes after a member: another member, or damage (inflate says which).
      inflateReset(&zs);
      stream_end_ = false;
    }
    zs.next_in = reinterpret_cast<Bytef*>(&raw_[raw_pos_]);
    zs.avail_in = static_cast<uInt>(std::min<std::size_t>(raw_.size() - raw_pos_, 1u << 30));
    zs.next_out = reinterpret_cast<Bytef*>(out);
    zs.avail_out = static_cast<uInt>(std::min<std::size_t>(size, 1u << 30));
    const int rc = inflate(&zs, Z_NO_FLUSH);
    raw_pos_ = raw_.size() - zs.avail_in;
    const std::size_t produced =
        static_cast<std::size_t>(reinterpret_cast<char*>(zs.next_out) - out);
    if (rc == Z_STREAM_END) {
      stream_end_ = true;
    } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
      throw io_error(path_, std::string("damaged or truncated gzip data") +
                                (zs.msg != nullptr ? std::string(" (") + zs.msg + ")" : ""));
    }
    if (produced > 0) return produced;
  }
}

bool has_gz_suffix(const std::string& path) {
  return path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0;
}

bool is_stream_output(const std::string& path) {
  if (path == "-") return true;
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 && !S_ISREG(info.st_mode) && !S_ISDIR(info.st_mode);
}

// gzip at the SDK writer's default level, 6, zlib's (as gzwrite's before).
OutputFile::OutputFile(const std::string& path) : path_(path) {
  if (!is_stream_output(path)) {
    file_.emplace(path, has_gz_suffix(path));
  } else if (has_gz_suffix(path)) {
    throw io_error(path,
                   "is not a regular file, and a .gz output is written to a file: name a "
                   "file, or drop .gz to write plain JSON to the stream");
  } else if (path == "-") {
    stream_fd_ = STDOUT_FILENO;
  } else {
    stream_fd_ = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (stream_fd_ < 0) throw io_error(path, std::strerror(errno));
    owns_stream_fd_ = true;
  }
  buffer_.reserve(kFlushBytes + (1 << 16));
}

// The writer removes its temporary file unless committed.
OutputFile::~OutputFile() {
  if (owns_stream_fd_) ::close(stream_fd_);
}

void OutputFile::maybe_flush() {
  if (buffer_.size() >= kFlushBytes) flush();
}

void OutputFile::write(std::string_view text) {
  flush();
  write_through(text);
}

void OutputFile::flush() {
  write_through(buffer_);
  buffer_.clear();
}

void OutputFile::write_through(std::string_view text) {
  if (!file_) {
    while (!text.empty()) {
      const ssize_t n = ::write(stream_fd_, text.data(), text.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) throw io_error(path_, std::string("write failed: ") + std::strerror(errno));
      text.remove_prefix(static_cast<std::size_t>(n));
    }
    return;
  }
  // A full disk stops the command here, not after formatting everything:
  // said by the write itself once compression met it, else by error().
  try {
    file_->write(text);
  } catch (const std::system_error& e) {
    throw io_error(path_, std::string("write failed: ") + std::strerror(e.code().value()));
  }
  if (file_->error() != 0) {
    throw io_error(path_, std::string("write failed: ") + std::strerror(file_->error()));
  }
}

void OutputFile::close() {
  flush();
  if (file_) file_->commit();
}

}  // namespace regiontrace::cli
