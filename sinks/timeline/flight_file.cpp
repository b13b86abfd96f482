#include "flight_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

namespace regiontrace::timeline {
namespace {

[[noreturn]] void fail(const std::string& what, const std::string& path) {
  throw std::system_error(errno, std::generic_category(), what + " " + path);
}

// A stream that owns nothing beyond what deflateEnd frees.
struct StreamCopy {
  z_stream stream{};
  bool made = false;
  ~StreamCopy() {
    if (made) deflateEnd(&stream);
  }
};

}  // namespace

FlightFile::FlightFile(std::string path) : path_(std::move(path)) {
  // Level 1: the file is rewritten by the whole trace at close; while the
  // program runs, the CPU it takes matters more than its size.
  if (deflateInit2(&stream_, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    throw std::system_error(ENOMEM, std::generic_category(), "cannot compress " + path_);
  }
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    const int e = errno;
    deflateEnd(&stream_);
    errno = e;
    fail("cannot create", path_);
  }
}

FlightFile::~FlightFile() {
  if (fd_ >= 0) ::close(fd_);
  deflateEnd(&stream_);
}

void FlightFile::deflate_into(z_stream& stream, std::string_view in, int flush, std::string& out) {
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  stream.avail_in = static_cast<uInt>(in.size());
  unsigned char chunk[1 << 15];
  for (;;) {
    stream.next_out = chunk;
    stream.avail_out = sizeof(chunk);
    const int rc = deflate(&stream, flush);
    if (rc == Z_STREAM_ERROR) {
      throw std::system_error(EINVAL, std::generic_category(), "cannot compress " + path_);
    }
    out.append(reinterpret_cast<const char*>(chunk), sizeof(chunk) - stream.avail_out);
    if (flush == Z_FINISH ? rc == Z_STREAM_END : stream.avail_out != 0) return;
  }
}

void FlightFile::append(std::string_view body) {
  if (fd_ < 0 || body.empty()) return;
  deflate_into(stream_, body, Z_NO_FLUSH, body_);
}

void FlightFile::commit(std::string_view tail) {
  if (fd_ < 0) return;
  deflate_into(stream_, {}, Z_SYNC_FLUSH, body_);
  StreamCopy copy;
  if (deflateCopy(&copy.stream, &stream_) != Z_OK) {
    throw std::system_error(ENOMEM, std::generic_category(), "cannot compress " + path_);
  }
  copy.made = true;
  std::string out = body_;
  deflate_into(copy.stream, tail, Z_FINISH, out);
  std::size_t done = 0;
  while (done < out.size()) {
    const ssize_t n =
        ::pwrite(fd_, out.data() + done, out.size() - done, static_cast<off_t>(body_end_ + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("cannot write", path_);
    }
    done += static_cast<std::size_t>(n);
  }
  const std::uint64_t end = body_end_ + out.size();
  // A shorter tail than the last one leaves bytes of it past the end.
  if (end < end_ && ::ftruncate(fd_, static_cast<off_t>(end)) != 0) fail("cannot truncate", path_);
  body_end_ += body_.size();
  end_ = end;
  body_.clear();
}

void FlightFile::remove() {
  if (fd_ < 0) return;
  ::close(fd_);
  fd_ = -1;
  ::unlink(path_.c_str());
}

}  // namespace regiontrace::timeline
