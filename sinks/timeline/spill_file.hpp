// The writer thread's store of full chunks while the run goes on: raw
// records appended to a file that is unlinked as soon as it is made, so
// memory stays bounded by buffer_mb, writing keeps up with millions of
// regions a second (no formatting, no compression on the way), and a killed
// run leaves nothing behind. The trace is formatted from it at close().
#pragma once

#include <cstdint>
#include <string>

namespace regiontrace::timeline {

class SpillFile {
 public:
  // Throws std::runtime_error naming the folder when no file can be made.
  explicit SpillFile(const std::string& folder);
  ~SpillFile();
  SpillFile(const SpillFile&) = delete;
  SpillFile& operator=(const SpillFile&) = delete;

  // Returns the offset written at. Throws naming the folder and errno.
  std::uint64_t append(const void* data, std::size_t bytes);
  // Throws on a short read.
  void read(std::uint64_t offset, void* out, std::size_t bytes) const;
  // Gives the disk space of a range back (a hole: it reads as zeros from
  // then on). False where the file system cannot.
  bool release(std::uint64_t offset, std::size_t bytes);
  std::uint64_t size() const { return size_; }

 private:
  std::string folder_;
  int fd_ = -1;
  std::uint64_t size_ = 0;
};

}  // namespace regiontrace::timeline
