// The regions open on one thread. Frames are pushed for every region while a
// sink runs (selected or not), so every event knows its depth and path; the
// path string is only built when an event actually needs it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "regiontrace/sdk/events.hpp"

namespace regiontrace::detail {

struct Frame {
  RegionId id = 0;
  std::uint32_t generation = 0;  // start-up the frame was opened under
  std::uint64_t token = 0;
  std::uint64_t delivered = 0;  // sinks that got on_region_begin: they get the end
  std::uint64_t inside = 0;     // sinks with a selected region open at or above this frame
  std::uint32_t path_end = 0;   // length of `path` up to this frame, once built
};

class ThreadStack {
 public:
  explicit ThreadStack(std::uint64_t number) : number_(number) { frames_.reserve(32); }

  std::uint64_t number() const { return number_; }
  std::vector<Frame>& frames() { return frames_; }
  std::uint64_t next_token() {
    return (number_ << 40) | (++serial_ & ((std::uint64_t{1} << 40) - 1));
  }

  // "outer/inner" for frames [0, depth).
  std::string_view path(std::size_t depth);
  // Forget built path text at and above `depth` (frames popped or replaced).
  void truncate_path(std::size_t depth);

  static std::uint64_t thread_of(std::uint64_t token) { return token >> 40; }

 private:
  std::uint64_t number_;
  std::uint64_t serial_ = 0;
  std::vector<Frame> frames_;
  std::string path_;
  std::size_t path_depth_ = 0;
};

}  // namespace regiontrace::detail
