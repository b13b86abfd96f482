// The part of a thread's region stack and of the routing table that the
// inline fast path of Region reads: entering and leaving a region that no
// sink selected, while sinks run. Out of line that pair was two calls through
// the PLT and ~60 instructions; inline, a few loads and stores in the
// caller. Everything else (selected regions, begin/end tokens, a thread's
// first region, repairs) goes through detail::enter / detail::leave_scope.
//
// Not a stable interface: the layout is the library's, and a program built
// against other headers than the library's own is not supported (the
// library's SONAME carries its version).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "regiontrace/detail/region_token.hpp"
#include "regiontrace/export.hpp"

namespace regiontrace::detail {

// One open region.
struct Frame {
  std::uint32_t id = 0;
  std::uint32_t generation = 0;  // start-up the frame was opened under
  std::uint64_t token = 0;
  std::uint64_t delivered = 0;  // sinks that got on_region_begin: they get the end
  std::uint64_t inside = 0;     // sinks with a selected region open at or above this frame
  std::int64_t begin_ns = 0;    // the begin event's time_ns, for the end event
  unsigned uncaught = 0;        // delivered: uncaught exceptions when it began
};

// A thread's open regions, innermost last. Frames are pushed for every
// region while a sink runs (selected or not), so every event knows its depth
// and path.
struct RegionStack {
  static constexpr std::uint32_t kMaxDepth = 256;

  std::uint64_t thread = 0;  // its number, 1 .. kMaxTrackedThreads
  std::uint64_t serial = 0;  // of the last token made
  std::uint32_t open = 0;    // frames in use: the depth of the next region
  Frame frames[kMaxDepth];
};

// What the routing table says about regions, for the fast path: which
// sinks selected each region id, and the mask of the sinks that select every
// region (inherited by frames opened outside any selected region).
struct RegionRouting {
  const std::atomic<std::uint64_t>* masks = nullptr;  // by region id, [0, capacity)
  std::size_t capacity = 0;
  std::uint32_t generation = 0;
  std::uint64_t unfiltered_mask = 0;
};

// The calling thread's stack: null until its first region (made out of
// line), while it exits, and for a thread past kMaxTrackedThreads. Initial-exec
// like the library's own thread state: reading it is one load through %fs,
// never a __tls_get_addr call.
extern REGIONTRACE_API __thread RegionStack* t_region_stack
    __attribute__((tls_model("initial-exec")));
// The running routing table, null while no sink runs. Tables are never freed.
extern REGIONTRACE_API std::atomic<const RegionRouting*> g_region_routing;

REGIONTRACE_API std::uint64_t enter(std::uint32_t id);
REGIONTRACE_API void leave_scope(std::uint64_t token);

// detail::enter(id), with the unselected case done here.
inline std::uint64_t enter_inline(std::uint32_t id) {
  RegionStack* const s = t_region_stack;
  const RegionRouting* const r = g_region_routing.load(std::memory_order_acquire);
  if (__builtin_expect(s != nullptr && r != nullptr && s->open != RegionStack::kMaxDepth, 1)) {
    if (__builtin_expect(id >= r->capacity || r->masks[id].load(std::memory_order_relaxed) == 0,
                         1)) {
      const std::uint32_t d = s->open;
      // A frame opened under an earlier start-up passes on no sinks.
      const std::uint64_t inside = d != 0 && s->frames[d - 1].generation == r->generation
                                       ? s->frames[d - 1].inside
                                       : r->unfiltered_mask;
      const std::uint64_t token = make_region_token(s->thread, ++s->serial);
      Frame& f = s->frames[d];
      f.id = id;
      f.generation = r->generation;
      f.token = token;
      f.inside = inside;
      f.delivered = 0;
      s->open = d + 1;
      return token;
    }
  }
  return enter(id);
}

// detail::leave_scope(token), with the innermost undelivered frame popped here.
inline void leave_scope_inline(std::uint64_t token) {
  RegionStack* const s = t_region_stack;
  if (__builtin_expect(s != nullptr && (token & kTokenDelivered) == 0 && s->open != 0, 1)) {
    const Frame& top = s->frames[s->open - 1];
    if (__builtin_expect(top.token == token && top.delivered == 0, 1)) {
      s->open = s->open - 1;
      return;
    }
  }
  leave_scope(token);
}

}  // namespace regiontrace::detail
