#include "spill_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace regiontrace::timeline {

SpillFile::SpillFile(const std::string& folder) : folder_(folder) {
  std::string pattern = folder + "/.timeline_spill_XXXXXX";
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  fd_ = ::mkostemp(name.data(), O_CLOEXEC);
  if (fd_ < 0) {
    throw std::runtime_error("cannot create the timeline's temporary file in `" + folder +
                             "`: " + std::strerror(errno));
  }
  ::unlink(name.data());
}

SpillFile::~SpillFile() {
  if (fd_ >= 0) ::close(fd_);
}

std::uint64_t SpillFile::append(const void* data, std::size_t bytes) {
  const std::uint64_t at = size_;
  const char* p = static_cast<const char*>(data);
  std::size_t left = bytes;
  while (left > 0) {
    const ssize_t n = ::pwrite(fd_, p, left, static_cast<off_t>(size_));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      throw std::runtime_error("cannot write the timeline's temporary file in `" + folder_ +
                               "`: " + std::strerror(n < 0 ? errno : ENOSPC));
    }
    p += n;
    left -= static_cast<std::size_t>(n);
    size_ += static_cast<std::uint64_t>(n);
  }
  return at;
}

bool SpillFile::release(std::uint64_t offset, std::size_t bytes) {
  return ::fallocate(fd_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(offset),
                     static_cast<off_t>(bytes)) == 0;
}

void SpillFile::read(std::uint64_t offset, void* out, std::size_t bytes) const {
  char* p = static_cast<char*>(out);
  while (bytes > 0) {
    const ssize_t n = ::pread(fd_, p, bytes, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      throw std::runtime_error("cannot read back the timeline's temporary file in `" + folder_ +
                               "`: " + std::strerror(n < 0 ? errno : EIO));
    }
    p += n;
    offset += static_cast<std::uint64_t>(n);
    bytes -= static_cast<std::size_t>(n);
  }
}

}  // namespace regiontrace::timeline
