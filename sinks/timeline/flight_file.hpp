// A .json.gz that is a whole document after every commit(), grown while the
// program runs: what a killed process leaves is the document as of its last
// commit, which gzip, Python's json and Perfetto open as they are.
//
// One gzip stream. The body (everything up to the last event committed) is
// deflated once, each commit ending on a byte boundary (Z_SYNC_FLUSH); the
// tail (provisional events, the closing members) is deflated from a copy of
// the stream state with Z_FINISH, so it ends the stream with a checksum of
// body and tail. The next commit writes its body over the old tail, then a
// new tail: one pwrite() of both, so the file holds the old document or the
// new one, except while that single write is under way.
#pragma once

#include <zlib.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace regiontrace::timeline {

class FlightFile {
 public:
  // Creates (truncates) `path`. Throws std::system_error naming it.
  explicit FlightFile(std::string path);
  ~FlightFile();
  FlightFile(const FlightFile&) = delete;
  FlightFile& operator=(const FlightFile&) = delete;

  // More of the body, kept in memory until commit().
  void append(std::string_view body);
  // Writes the body appended so far and `tail` after it. Throws
  // std::system_error with errno on a failed write.
  void commit(std::string_view tail);
  // Gives the file's disk space back (the trace that replaces it needs
  // it); the file is gone and commit() does nothing from then on.
  void remove();
  const std::string& path() const { return path_; }
  std::uint64_t bytes() const { return end_; }

 private:
  void deflate_into(z_stream& stream, std::string_view in, int flush, std::string& out);

  std::string path_;
  int fd_ = -1;
  z_stream stream_{};
  std::string body_;            // deflated body not written yet
  std::uint64_t body_end_ = 0;  // the body's end in the file (where the tail begins)
  std::uint64_t end_ = 0;       // the file's size
};

}  // namespace regiontrace::timeline
