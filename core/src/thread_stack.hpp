// The regions open on one thread. Frames are pushed for every region while a
// sink runs (selected or not), so every event knows its depth and path.
// Pushing and popping touch a fixed array: the unrouted case must cost a few
// nanoseconds. The path text is built only when an event needs it, and the
// built prefix is kept across pops, so a loop re-entering the same regions
// re-uses it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "regiontrace/detail/region_token.hpp"
#include "regiontrace/sdk/events.hpp"

namespace regiontrace::detail {

struct Frame {
  RegionId id = 0;
  std::uint32_t generation = 0;  // start-up the frame was opened under
  std::uint64_t token = 0;
  std::uint64_t delivered = 0;  // sinks that got on_region_begin: they get the end
  std::uint64_t inside = 0;     // sinks with a selected region open at or above this frame
  std::int64_t begin_ns = 0;    // the begin event's time_ns, for the end event
  unsigned uncaught = 0;        // delivered: uncaught exceptions when it began
};

class ThreadStack {
 public:
  static constexpr std::uint32_t kMaxDepth = 256;

  // `number`: 1 .. kMaxTrackedThreads (see regiontrace/detail/region_token.hpp).
  explicit ThreadStack(std::uint64_t number);

  std::uint64_t number() const { return number_; }
  std::uint32_t depth() const { return depth_; }
  bool empty() const { return depth_ == 0; }
  bool full() const { return depth_ == kMaxDepth; }
  Frame& top() { return frames_[depth_ - 1]; }
  const Frame& top() const { return frames_[depth_ - 1]; }
  Frame& at(std::uint32_t i) { return frames_[i]; }
  Frame& push() { return frames_[depth_++]; }
  void pop() { --depth_; }

  std::uint64_t next_token() { return make_region_token(number_, ++serial_); }

  // std::uncaught_exceptions() of this thread, read without the call (and
  // its TLS lookup through __tls_get_addr): ~4 ns a region pair.
  unsigned uncaught_exceptions() const { return *uncaught_; }

  // "outer/inner" for frames [0, depth).
  std::string_view path(std::uint32_t depth);

 private:
  std::uint64_t number_;
  const unsigned* uncaught_;  // this thread's count in the C++ runtime
  std::uint64_t serial_ = 0;
  std::uint32_t depth_ = 0;
  Frame frames_[kMaxDepth];
  // path_ holds the names of built_ids_[0, built_depth_), ending at built_end_.
  std::string path_;
  std::uint32_t built_depth_ = 0;
  RegionId built_ids_[kMaxDepth];
  std::uint32_t built_end_[kMaxDepth];
};

}  // namespace regiontrace::detail
