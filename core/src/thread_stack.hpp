// The regions open on one thread: the RegionStack the public header's fast
// path pushes and pops (regiontrace/detail/region_stack.hpp), and what the
// library keeps beside it. The path text is built only when an event needs
// it, and the built prefix is kept across pops, so a loop re-entering the
// same regions re-uses it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "regiontrace/detail/region_stack.hpp"
#include "regiontrace/detail/region_token.hpp"
#include "regiontrace/sdk/events.hpp"
#include "span_buffer.hpp"

namespace regiontrace::detail {

class RoutingTable;

class ThreadStack : public RegionStack {
 public:
  // `number`: 1 .. kMaxTrackedThreads (see regiontrace/detail/region_token.hpp).
  explicit ThreadStack(std::uint64_t number);

  std::uint64_t number() const { return thread; }
  std::uint32_t depth() const { return open; }
  bool empty() const { return open == 0; }
  bool full() const { return open == kMaxDepth; }
  Frame& top() { return frames[open - 1]; }
  const Frame& top() const { return frames[open - 1]; }
  Frame& at(std::uint32_t i) { return frames[i]; }
  // Frames are pushed by push_frame (regiontrace/detail/region_stack.hpp).
  void pop() { store_shared(open, open - 1); }

  std::uint64_t next_token() { return last_token = next_region_token(last_token); }

  // The thread's spans for kInterestSpans sinks: made on its first span.
  SpanBuffer* spans() const { return owned_spans_.get(); }
  SpanBuffer& make_spans(std::uint32_t generation);

  // std::uncaught_exceptions() of this thread, read without the call (and
  // its TLS lookup through __tls_get_addr): ~4 ns a region pair.
  unsigned uncaught_exceptions() const { return *uncaught; }

  // "outer/inner" for frames [0, depth). Inline: an event's path is
  // usually the one built for the event before, and the check that it still
  // is costs less than the call.
  std::string_view path(std::uint32_t depth) {
    if (depth > open) depth = open;
    if (depth == 0) return {};
    std::uint32_t valid = 0;
    while (valid < depth && valid < path_depth && path_ids[valid] == frames[valid].id) ++valid;
    if (__builtin_expect(valid < depth, 0)) build_path(valid, depth);
    return std::string_view(path_text, path_end[depth - 1]);
  }
  // path(depth) for a frame at depth - 1 that is still open and whose
  // begin event built its path: nothing under it can have changed since.
  std::string_view open_path(std::uint32_t depth) const {
    return std::string_view(path_text, path_end[depth - 1]);
  }

  // set_thread_step(): the step this thread's tensor events carry instead of
  // the process's (kNoStep: none), and which sinks of `tensor_step_table`
  // select it (worked out at the first tensor event under that table).
  std::int64_t tensor_step = kNoStep;
  const RoutingTable* tensor_step_table = nullptr;
  std::uint64_t tensor_step_sinks = 0;

 private:
  // Rebuilds the path from frame `valid` on, up to `depth`.
  __attribute__((noinline)) void build_path(std::uint32_t valid, std::uint32_t depth);

  std::unique_ptr<SpanBuffer> owned_spans_;  // RegionStack::spans
  // The text of RegionStack::path_text (the names of path_ids[0,
  // path_depth), each ending at its path_end).
  std::string path_;
};

}  // namespace regiontrace::detail
