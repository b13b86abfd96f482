// The part of a thread's region stack and of the routing table that the
// inline fast path of Region reads: entering and leaving a region that no
// sink selected, recording one that only span sinks selected (into the
// thread's SpanRing), and delivering the begin and end events of one that
// only the table's one region-event sink selected, while sinks run. Out of
// line such a pair costs two calls through the PLT and ~60 instructions (an
// event pair ~190); inline, a few loads and stores in the caller. Everything
// else (several event sinks, begin/end tokens, a thread's first region or
// span, a path not built yet, a full ring, repairs) goes through
// detail::enter / detail::leave_scope.
//
// Not a stable interface: the layout is the library's, and a program built
// against other headers than the library's own is not supported (the
// library's SONAME carries its version).
#pragma once

#include <time.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string_view>

#include "regiontrace/detail/region_token.hpp"
#include "regiontrace/export.hpp"
#include "regiontrace/sdk/clock_segment.hpp"
#include "regiontrace/sdk/events.hpp"
#include "regiontrace/sdk/sink.hpp"

// The inline event path calls the sink from the caller's code and catches
// what it throws there, as the library does: a translation unit built
// without exceptions (or against another SDK ABI than the library's) goes
// out of line instead.
#if (defined(__cpp_exceptions) || defined(__EXCEPTIONS)) && \
    REGIONTRACE_SDK_ABI_VERSION == REGIONTRACE_SDK_ABI_VERSION_CURRENT
#define REGIONTRACE_INLINE_EVENTS 1
#else
#define REGIONTRACE_INLINE_EVENTS 0
#endif

namespace regiontrace::detail {

// One open region. A frame with span sinks among `delivered` is also the
// record of an open span: the host's stopping thread reads id, generation,
// delivered and begin_ns of the frames below RegionStack::open while the
// owner runs on (Dispatcher::collect_spans), so the owner stores those four
// and RegionStack::open with atomic stores (store_shared: plain moves on
// x86), and a finished span leaves that view by the pop that precedes its
// publication. (This record was a copy in SpanRing: four stores more a span.)
struct alignas(64) Frame {
  std::uint32_t id = 0;
  std::uint32_t generation = 0;  // start-up the frame was opened under
  // The token the region's guard holds: with kTokenDelivered exactly when
  // `delivered` is not 0, so that one comparison at the end also tells
  // which end it is.
  std::uint64_t token = 0;
  std::uint64_t delivered = 0;  // sinks that got on_region_begin: they get the end
  std::uint64_t inside = 0;     // sinks with a selected region open at or above this frame
  std::int64_t begin_ns = 0;    // the begin event's time_ns, for the end event
  unsigned uncaught = 0;        // delivered: uncaught exceptions when it began
  // How its end is taken: frame_ending(kind, generation). The inline ends
  // compare it whole with the one they can take, so a frame of another
  // kind or start-up never passes for theirs.
  std::uint64_t ending = 0;
};

// What ends a frame. kEndPlain: nothing was delivered, the pop is all.
// kEndSpans: only span sinks got it, its span is appended to the SpanRing.
// kEndEvent: only RegionRouting::event_sink got it, its end event is built
// from the frame. kEndOutOfLine: the library's leave delivers the end.
// Every end may go out of line; only the named kinds may go inline.
enum FrameEnd : std::uint32_t { kEndPlain = 0, kEndOutOfLine = 1, kEndSpans = 2, kEndEvent = 3 };

__attribute__((always_inline)) constexpr std::uint64_t frame_ending(FrameEnd kind,
                                                                    std::uint32_t generation) {
  return std::uint64_t{kind} << 32 | generation;
}

constexpr std::uint32_t kMaxRegionDepth = 256;

// A store another thread may read at the same time (see Frame).
template <typename T>
__attribute__((always_inline)) inline void store_shared(T& field, T value) {
  __atomic_store_n(&field, value, __ATOMIC_RELAXED);
}

// A thread's finished spans for the kInterestSpans sinks (which sinks in
// `sinks`); the spans it has open are its frames. The owner appends without
// a lock; the library's SpanBuffer (core/src/span_buffer.hpp) adds the lock
// under which spans are handed over, by the owner or by the stopping thread.
struct SpanRing {
  static constexpr std::uint32_t kCapacity = 1024;
  // `key` while nothing may be appended inline (a hand-over is under way).
  static constexpr std::uint32_t kClosedKey = ~std::uint32_t{0};

  // The owner: false when full (the library hands over, then appends).
  bool append(const Span& span, std::uint64_t to) {
    const std::uint32_t n = count.load(std::memory_order_relaxed);
    if (__builtin_expect(n == kCapacity, 0)) return false;
    spans[n] = span;
    sinks[n] = to;
    count.store(n + 1, std::memory_order_release);
    return true;
  }
  std::atomic<std::uint32_t> count{0};  // published spans: whole below it
  std::uint32_t generation = 0;         // start-up the spans belong to; changed under the lock
  bool handing_over = false;            // the owner is handing over: nothing is appended
  // The owner's: `generation`, or kClosedKey while handing over. One
  // comparison of Frame::ending with frame_ending(kEndSpans, key) tells the
  // inline end that the frame is span-only, of this start-up, and that the
  // ring takes spans now.
  std::uint32_t key = 0;
  const std::atomic<std::int64_t>* step = nullptr;  // the current step
  Span spans[kCapacity];
  std::uint64_t sinks[kCapacity];
};

// A thread's open regions, innermost last. Frames are pushed for every
// region while a sink runs (selected or not), so every event knows its depth
// and path.
struct RegionStack {
  static constexpr std::uint32_t kMaxDepth = kMaxRegionDepth;

  std::uint64_t thread = 0;      // its number, 1 .. kMaxTrackedThreads
  std::uint64_t last_token = 0;  // made: first_region_token(thread) before any
  // Frames in use: the depth of the next region. Stored with store_shared
  // (a push: release, after the frame's fields; see Frame).
  std::uint32_t open = 0;
  // std::uncaught_exceptions() of this thread, in the C++ runtime's globals.
  const unsigned* uncaught = nullptr;
  SpanRing* spans = nullptr;  // made out of line with the thread's first span
  // The path text events carry ("outer/inner"), built out of line for the
  // regions path_ids[0, path_depth) and kept across pops: the frame at
  // depth d has the path [path_text, path_text + path_end[d]) while
  // frames[0, d] hold path_ids[0, d]. The inline event path reads it.
  const char* path_text = nullptr;
  std::uint32_t path_depth = 0;
  std::uint32_t path_ids[kMaxDepth];
  std::uint32_t path_end[kMaxDepth];
  Frame frames[kMaxDepth];
};

// The one writer of a frame: every entry, inline or out of line, and the
// library's re-opening of frames, pushes through here. The fields another
// thread reads (see Frame) are stored shared, and the depth is published
// last. `s` is not full.
__attribute__((always_inline)) inline void push_frame(RegionStack* s, std::uint32_t id,
                                                      std::uint32_t generation, std::uint64_t token,
                                                      std::uint64_t inside, std::uint64_t delivered,
                                                      std::uint64_t ending, unsigned uncaught,
                                                      std::int64_t begin_ns) {
  const std::uint32_t d = s->open;
  Frame& f = s->frames[d];
  store_shared(f.id, id);
  store_shared(f.generation, generation);
  f.token = token;
  f.inside = inside;
  store_shared(f.delivered, delivered);
  f.uncaught = uncaught;
  f.ending = ending;
  store_shared(f.begin_ns, begin_ns);
  __atomic_store_n(&s->open, d + 1, __ATOMIC_RELEASE);
}

// What the routing table says about regions, for the fast path: which
// sinks selected each region id, and the mask of the sinks that select every
// region (inherited by frames opened outside any selected region).
struct RegionRouting {
  const std::atomic<std::uint64_t>* masks = nullptr;  // by region id, [0, capacity)
  std::size_t capacity = 0;
  std::uint32_t generation = 0;
  std::uint64_t unfiltered_mask = 0;
  // Sinks that take their regions as spans: a region only they selected is
  // recorded here, inline, once the thread has its SpanRing.
  std::uint64_t span_mask = 0;
  // When every running sink is a span sink and no filter awaits a name:
  // their mask. A region they all selected then needs no other check, nor
  // its parent's frame (its `inside` is every sink). 0 otherwise (never a
  // selected mask).
  std::uint64_t span_everything = 0;
  // Some filter waits for a name no region had at start-up: a region's
  // first entry under this table goes out of line, to be noted.
  bool track_entered = false;
  const std::atomic<std::uint8_t>* entered = nullptr;   // by region id
  const std::atomic<std::uint64_t>* live = nullptr;     // sinks on, step selected
  const std::atomic<std::uint64_t>* enabled = nullptr;  // sinks on (a failed one is not)
  const std::atomic<std::int64_t>* step = nullptr;      // the current step
  // The table's only sink that takes region events (not spans), and its
  // bit; null and 0 when there are none or several. A region only it
  // selected has its events built and delivered inline.
  Sink* event_sink = nullptr;
  std::uint64_t event_sink_bit = 0;
  bool event_sink_timed = false;            // it asked for time_ns
  const std::string_view* names = nullptr;  // by region id, [0, capacity)
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
// enter(id) for a region `selected` by some sinks, on a thread with a stack
// (`s`, not full) while table `r` runs: what the inline code read is not
// read again.
REGIONTRACE_API std::uint64_t enter_selected(RegionStack* s, const RegionRouting* r,
                                             std::uint32_t id, std::uint64_t selected);
REGIONTRACE_API void leave_scope(std::uint64_t token);
// The event sink of table `r` threw from `callback` (`what`: the
// exception's message, null when it is not a std::exception): it is
// switched off as when the library called it.
REGIONTRACE_API void event_sink_threw(const RegionRouting* r, const char* callback,
                                      const char* what) noexcept;
// The library's clock (sdk/clock.hpp's, CLOCK_MONOTONIC ns): spans recorded
// here and in the library must share one calibration to nest.
REGIONTRACE_API std::int64_t clock_ns();
// The library clock's current segment: null until it is calibrated, and for
// good without the TSC (REGIONTRACE_CLOCK=monotonic, or no invariant TSC).
extern REGIONTRACE_API std::atomic<const sdk::clock::Segment*> g_clock_segment;
// Set once the library clock has settled on CLOCK_MONOTONIC: inline code
// then calls clock_gettime itself (three calls less than through clock_ns).
extern REGIONTRACE_API std::atomic<bool> g_clock_monotonic;

// clock_ns(), read here while the TSC is inside the library clock's current
// segment (two calls through the PLT and a function-local static guard less
// per span); the library reads it otherwise (calibration, check points).
__attribute__((always_inline)) inline std::int64_t clock_ns_inline() {
#if defined(__x86_64__)
  const sdk::clock::Segment* seg = g_clock_segment.load(std::memory_order_acquire);
  if (__builtin_expect(seg != nullptr, 1)) {
    const std::uint64_t t = __builtin_ia32_rdtsc();
    if (__builtin_expect(t < seg->next_check_tsc, 1)) return seg->value_at(t);
  }
#endif
  if (g_clock_monotonic.load(std::memory_order_relaxed)) {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
  }
  return clock_ns();
}

// A region only span sinks selected, on a thread with its SpanRing: pushed
// and stamped here; its span is appended when it ends.
// `everything`: selected == r->span_everything, so no parent is read.
template <bool everything>
__attribute__((always_inline)) inline std::uint64_t enter_span_inline(RegionStack* s,
                                                                      const RegionRouting* r,
                                                                      std::uint32_t id,
                                                                      std::uint64_t selected) {
  const std::uint32_t d = s->open;
  const std::uint64_t outer = everything || d == 0 || s->frames[d - 1].generation != r->generation
                                  ? r->unfiltered_mask
                                  : s->frames[d - 1].inside;
  const std::uint64_t delivered = selected & r->live->load(std::memory_order_relaxed);
  // Read once: the atomic stores of push_frame would have it read again.
  const std::uint32_t generation = r->generation;
  const std::uint64_t token = s->last_token = next_region_token(s->last_token);
  if (delivered == 0) {
    push_frame(s, id, generation, token, outer | selected, 0, frame_ending(kEndPlain, generation),
               0, 0);
    return token;
  }
  push_frame(s, id, generation, token | kTokenDelivered, outer | selected, delivered,
             frame_ending(kEndSpans, generation), *s->uncaught, clock_ns_inline());
  return token | kTokenDelivered;
}

#if REGIONTRACE_INLINE_EVENTS
// Whether the path text built out of line is that of the frames [0, d) and
// region `id` at depth d: then an event at depth d > 0 needs nothing built.
__attribute__((always_inline)) inline bool path_built(const RegionStack* s, std::uint32_t d,
                                                      std::uint32_t id) {
  if (s->path_depth <= d || s->path_ids[d] != id) return false;
  for (std::uint32_t i = 0; i < d; ++i) {
    if (s->path_ids[i] != s->frames[i].id) return false;
  }
  return true;
}

// Calls the table's event sink as the library's dispatch does: what it
// throws switches it off, the application goes on.
template <bool ending>
__attribute__((always_inline)) inline void deliver_event_inline(const RegionRouting* r,
                                                                const RegionEvent& ev) {
  constexpr const char* kCallback = ending ? "on_region_end" : "on_region_begin";
  try {
    if (ending) {
      r->event_sink->on_region_end(ev);
    } else {
      r->event_sink->on_region_begin(ev);
    }
  } catch (const std::exception& e) {
    event_sink_threw(r, kCallback, e.what());
  } catch (...) {
    event_sink_threw(r, kCallback, nullptr);
  }
}

// A region only r->event_sink selected (live, path built): pushed, stamped
// when the sink asked for time, and its begin event delivered here.
__attribute__((always_inline)) inline std::uint64_t enter_event_inline(RegionStack* s,
                                                                       const RegionRouting* r,
                                                                       std::uint32_t id,
                                                                       std::uint64_t selected) {
  const std::uint32_t d = s->open;
  const std::uint64_t outer = d == 0 || s->frames[d - 1].generation != r->generation
                                  ? r->unfiltered_mask
                                  : s->frames[d - 1].inside;
  const std::uint32_t generation = r->generation;
  const std::uint64_t token = (s->last_token = next_region_token(s->last_token)) | kTokenDelivered;
  const std::int64_t now = r->event_sink_timed ? clock_ns_inline() : 0;
  push_frame(s, id, generation, token, outer | selected, selected,
             frame_ending(kEndEvent, generation), *s->uncaught, now);
  const std::string_view name = r->names[id];
  deliver_event_inline<false>(
      r, RegionEvent{id, name, d == 0 ? name : std::string_view(s->path_text, s->path_end[d]),
                     static_cast<int>(d), r->step->load(std::memory_order_relaxed), s->thread, now,
                     false, 0});
  return token;
}
#endif

// detail::enter(id), with the unselected case done here.
__attribute__((always_inline)) inline std::uint64_t enter_inline(std::uint32_t id) {
  RegionStack* const s = t_region_stack;
  const RegionRouting* const r = g_region_routing.load(std::memory_order_acquire);
  if (__builtin_expect(s != nullptr && r != nullptr && s->open != RegionStack::kMaxDepth, 1)) {
    const std::uint64_t selected =
        id < r->capacity ? r->masks[id].load(std::memory_order_relaxed) : 0;
    if (__builtin_expect(selected == 0, 1)) {
      const std::uint32_t d = s->open;
      // A frame opened under an earlier start-up passes on no sinks.
      const std::uint64_t inside = d != 0 && s->frames[d - 1].generation == r->generation
                                       ? s->frames[d - 1].inside
                                       : r->unfiltered_mask;
      const std::uint64_t token = s->last_token = next_region_token(s->last_token);
      const std::uint32_t generation = r->generation;
      push_frame(s, id, generation, token, inside, 0, frame_ending(kEndPlain, generation), 0, 0);
      return token;
    }
    if (s->spans != nullptr) {
      // span_everything is a set of span sinks (or 0, which `selected` is not).
      if (selected == r->span_everything) return enter_span_inline<true>(s, r, id, selected);
      if ((selected & ~r->span_mask) == 0 &&
          (!r->track_entered || r->entered[id].load(std::memory_order_relaxed) != 0)) {
        return enter_span_inline<false>(s, r, id, selected);
      }
    }
#if REGIONTRACE_INLINE_EVENTS
    // event_sink_bit is one sink (or 0, which `selected` is not).
    if (selected == r->event_sink_bit && (r->live->load(std::memory_order_relaxed) & selected) &&
        (!r->track_entered || r->entered[id].load(std::memory_order_relaxed) != 0) &&
        (s->open == 0 || path_built(s, s->open, id))) {
      return enter_event_inline(s, r, id, selected);
    }
#endif
    return enter_selected(s, r, id, selected);
  }
  return enter(id);
}

// The end of a delivered frame, when its span can be appended here: a
// span-only frame of the ring's start-up (its ending is kEndSpans with the
// ring's key, which also says that no hand-over is under way), room in the
// ring. False: out of line, where a full ring is handed over first. Always
// inlined: a call costs ~15 instructions of a ~225 span pair.
__attribute__((always_inline)) inline bool leave_span_inline(RegionStack* s, std::uint64_t token) {
  SpanRing* const ring = s->spans;  // not null: leave_scope_inline checked
  const std::uint32_t d = s->open - 1;
  const Frame& top = s->frames[d];
  const std::uint32_t n = ring->count.load(std::memory_order_relaxed);
  // The count of exceptions in flight changed since the begin: whether
  // this end is unwinding is the library's to tell.
  if (top.token != token || top.ending != frame_ending(kEndSpans, ring->key) ||
      n == SpanRing::kCapacity || *s->uncaught != top.uncaught) {
    return false;
  }
  // Written in place: a Span built on the stack and copied cost ten more
  // instructions per span. id, depth, unwinding (0) and open (0) are one
  // store.
  Span& span = ring->spans[n];
  const std::uint64_t head = std::uint64_t{top.id} | std::uint64_t{d} << 32;
  static_assert(offsetof(Span, id) == 0 && offsetof(Span, depth) == 4 &&
                    offsetof(Span, unwinding) == 6 && offsetof(Span, open) == 7 &&
                    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
                "Span's head is one little-endian word");
  __builtin_memcpy(static_cast<void*>(&span), &head, sizeof(head));
  span.step = ring->step->load(std::memory_order_relaxed);
  span.begin_ns = top.begin_ns;
  span.end_ns = clock_ns_inline();
  ring->sinks[n] = top.delivered;
  // Popped before the span is published: the stopping thread, which reads
  // the published spans and then the open frames, never sees it as both.
  store_shared(s->open, d);
  ring->count.store(n + 1, std::memory_order_release);
  return true;
}

#if REGIONTRACE_INLINE_EVENTS
// The end of a delivered frame, when its end event can be delivered here:
// a frame only the running table's event sink got, of this start-up, the
// sink still on, no exception in flight that was not at the begin. False:
// out of line.
__attribute__((always_inline)) inline bool leave_event_inline(RegionStack* s, std::uint64_t token) {
  const std::uint32_t d = s->open - 1;
  const Frame& top = s->frames[d];
  const RegionRouting* const r = g_region_routing.load(std::memory_order_acquire);
  if (top.token != token || r == nullptr || top.ending != frame_ending(kEndEvent, r->generation) ||
      (r->enabled->load(std::memory_order_relaxed) & r->event_sink_bit) == 0 ||
      *s->uncaught != top.uncaught) {
    return false;
  }
  const std::int64_t now = r->event_sink_timed ? clock_ns_inline() : 0;
  const std::uint32_t id = top.id;
  const std::string_view name = r->names[id];
  deliver_event_inline<true>(
      r, RegionEvent{id, name, d == 0 ? name : std::string_view(s->path_text, s->path_end[d]),
                     static_cast<int>(d), r->step->load(std::memory_order_relaxed), s->thread, now,
                     false, top.begin_ns});
  store_shared(s->open, d);
  return true;
}
#endif

// detail::leave_scope(token), with the innermost undelivered frame popped
// here, and the span of a span-only frame appended here.
__attribute__((always_inline)) inline void leave_scope_inline(std::uint64_t token) {
  RegionStack* const s = t_region_stack;
  if (__builtin_expect(s != nullptr && s->open != 0, 1)) {
    if (__builtin_expect((token & kTokenDelivered) == 0, 1)) {
      const Frame& top = s->frames[s->open - 1];
      if (__builtin_expect(top.token == token, 1)) {  // and so not delivered
        store_shared(s->open, s->open - 1);
        return;
      }
    } else {
      // The spans' check first: s->spans is null on a thread that never
      // recorded a span (event sinks), which then makes no call.
      if (s->spans != nullptr && leave_span_inline(s, token)) return;
#if REGIONTRACE_INLINE_EVENTS
      if (leave_event_inline(s, token)) return;
#endif
    }
  }
  leave_scope(token);
}

}  // namespace regiontrace::detail
