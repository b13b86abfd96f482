// Dispatcher, hot path: entering and leaving regions. The inline code of the
// public header (regiontrace/detail/region_stack.hpp) takes what it can on
// the stack defined here; the rest comes to the exported
// detail::enter/leave/leave_scope. Both push frames with push_frame only,
// and a frame's `ending` says which end may take it: an end the inline code
// declines is always taken here, by deliver_end, for every sink the frame
// was delivered to.
#include <string>
#include <vector>

#include "dispatcher.hpp"
#include "event_builder.hpp"
#include "logger.hpp"
#include "region_registry.hpp"
#include "regiontrace/regiontrace.hpp"
#include "thread_stack.hpp"

namespace regiontrace::detail {
namespace {

std::atomic<std::uint64_t> g_thread_counter{0};

// Set when the thread's stack is gone (the thread is exiting) or the thread
// is not tracked (past kMaxTrackedThreads): no stack is made for it again.
thread_local bool t_untracked __attribute__((tls_model("initial-exec"))) = false;

ThreadStack* this_thread_stack() {
  return static_cast<ThreadStack*>(t_region_stack);
}

struct StackCleaner {
  ~StackCleaner() {
    ThreadStack* s = this_thread_stack();
    t_region_stack = nullptr;
    t_untracked = true;
    if (s != nullptr) {
      Dispatcher::instance().close_thread(*s);
      delete s;
    }
  }
};
thread_local StackCleaner t_cleaner;

__attribute__((noinline, cold)) void report_too_many_threads(std::uint64_t number) {
  log_once(LogLevel::kWarn, "too-many-threads",
           "thread number " + std::to_string(number) + " is past the " +
               std::to_string(kMaxTrackedThreads) +
               " threads a process can have tracked (region tokens hold " +
               std::to_string(kTokenThreadBits) +
               " bits of thread number); regions on this and later new threads are not "
               "recorded (reported once)");
}

__attribute__((noinline, cold)) std::uint64_t report_stack_full() {
  log_once(LogLevel::kWarn, "stack-full",
           "regions nested deeper than " + std::to_string(ThreadStack::kMaxDepth) +
               " on one thread; the deeper ones are not recorded");
  return 0;
}

}  // namespace

// The pointer is trivially destructible, so reaching it costs one TLS access;
// the cleaner (non-trivial) is touched only once per thread, when the stack
// is created, and ends what the thread left open when it exits.
__thread RegionStack* t_region_stack __attribute__((tls_model("initial-exec"))) = nullptr;
std::atomic<const RegionRouting*> g_region_routing{nullptr};

// Built when the library loads (before any application code can open a
// region) and never destroyed: regions may run in exit handlers. A plain
// pointer keeps the hot path free of function-local-static guards; defined
// here so that enter/leave read it directly.
Dispatcher* const Dispatcher::instance_ = new Dispatcher();

ThreadStack* current_thread_stack() {
  ThreadStack* s = this_thread_stack();
  if (s != nullptr || t_untracked) return s;
  const std::uint64_t number = g_thread_counter.fetch_add(1, std::memory_order_relaxed) + 1;
  if (number > kMaxTrackedThreads) {
    t_untracked = true;
    report_too_many_threads(number);
    return nullptr;
  }
  s = new ThreadStack(number);
  t_region_stack = s;
  (void)&t_cleaner;  // odr-use: registers the cleaner for this thread
  return s;
}

std::int64_t clock_ns() {
  return now_ns();
}

std::uint64_t exchange_thread_counter_for_testing(std::uint64_t value) {
  return g_thread_counter.exchange(value);
}

// Region events are built whole, in the SDK's field order: default-
// initialising one and then setting its fields was a loop of stores, a
// tenth of a delivered region pair. The fields every kind carries are
// those of make_event.
// A top-level region's path is its name: no path text is built for it. An
// end's path was built by its begin event, and the frames under it cannot
// have changed while it was open (`ending`).
__attribute__((always_inline)) inline RegionEvent Dispatcher::region_event(
    ThreadStack& stack, RegionId id, std::uint32_t depth, bool ending, std::int64_t time_ns,
    bool unwinding, std::int64_t begin_ns) const {
  const std::string_view name = registry_->entry(id).name;
  return RegionEvent{id,
                     name,
                     depth == 1 ? name
                     : ending   ? stack.open_path(depth)
                                : stack.path(depth),
                     static_cast<int>(depth) - 1,
                     step_.load(std::memory_order_relaxed),
                     stack.number(),
                     time_ns,
                     unwinding,
                     begin_ns};
}

// How a frame `delivered` to those sinks ends: inline when one kind of sink
// alone got it (a span-only frame like those enter_span_inline opens, an
// event frame like enter_event_inline's: its begin event builds the path the
// inline end reads).
__attribute__((always_inline)) inline std::uint64_t ending_of(const RoutingTable& table,
                                                              std::uint64_t delivered) {
  if (delivered == 0) return frame_ending(kEndPlain, table.generation());
  if ((delivered & ~table.span_mask) == 0) return frame_ending(kEndSpans, table.generation());
  if (delivered == table.event_sink_bit) return frame_ending(kEndEvent, table.generation());
  return frame_ending(kEndOutOfLine, table.generation());
}

__attribute__((always_inline)) inline void Dispatcher::deliver_end(ThreadStack& stack,
                                                                   bool unwinding) {
  Frame& f = stack.top();
  const RoutingTable* t = table_.load(std::memory_order_acquire);
  const std::uint64_t mask = t != nullptr && f.generation == t->generation()
                                 ? f.delivered & enabled_.load(std::memory_order_relaxed)
                                 : 0;
  // No longer an open span to the stopping thread (the frame is popped only
  // after its span is appended below).
  const std::int64_t begin_ns = f.begin_ns;
  if (stack.spans() != nullptr) store_shared(f.begin_ns, std::int64_t{0});
  if (mask == 0) return;
  const std::int64_t time_ns = (mask & t->time_mask) != 0 ? clock_ns_inline() : 0;
  const std::uint64_t spans = mask & t->span_mask;
  if (__builtin_expect(spans != 0, 0)) {
    end_span(stack, *t, f.id, begin_ns, spans, time_ns, unwinding);
  }
  const std::uint64_t events = mask & ~t->span_mask;
  if (events == 0) return;
  const RegionEvent ev =
      region_event(stack, f.id, stack.depth(), true, time_ns, unwinding, begin_ns);
  deliver(*t, events, "on_region_end", [&](Sink& s) { s.on_region_end(ev); });
}

__attribute__((always_inline)) inline std::uint64_t Dispatcher::push(ThreadStack& stack,
                                                                     const RoutingTable& table,
                                                                     RegionId id,
                                                                     std::uint64_t token) {
  if (__builtin_expect(stack.full(), 0)) return report_stack_full();
  return push_selected(stack, table, id, token, table.region_mask(id));
}

__attribute__((always_inline)) inline std::uint64_t Dispatcher::push_selected(
    ThreadStack& stack, const RoutingTable& table, RegionId id, std::uint64_t token,
    std::uint64_t selected) {
  const std::uint64_t outer = inside_mask(&stack, table);
  const std::uint64_t delivered = selected & (table.region_event_mask | table.span_mask) &
                                  live_.load(std::memory_order_relaxed);
  if (__builtin_expect(selected != 0 && table.track_entered, 0)) note_entered(table, id);
  if (__builtin_expect(delivered == 0, 1)) {
    push_frame(&stack, id, table.generation(), token, outer | selected, 0,
               frame_ending(kEndPlain, table.generation()), 0, 0);
    return token;
  }
  token |= kTokenDelivered;
  const std::uint64_t spans = delivered & table.span_mask;
  // Made before the frame that needs it is pushed: the stopping thread
  // reads a thread's open spans through its buffer.
  if (__builtin_expect(spans != 0 && stack.spans() == nullptr, 0)) make_span_buffer(stack, table);
  const std::int64_t begin_ns = (delivered & table.time_mask) != 0 ? clock_ns_inline() : 0;
  push_frame(&stack, id, table.generation(), token, outer | selected, delivered,
             ending_of(table, delivered), stack.uncaught_exceptions(), begin_ns);
  const std::uint64_t events = delivered & ~table.span_mask;
  if (events != 0) {
    const RegionEvent ev = region_event(stack, id, stack.depth(), false, begin_ns, false, 0);
    deliver(table, events, "on_region_begin", [&](Sink& s) { s.on_region_begin(ev); });
  }
  return token;
}

void Dispatcher::note_entered(const RoutingTable& table, RegionId id) {
  // The inline path takes this region's later entries under this table.
  table.note_entered(id);
  const RegionEntry& entry = registry_->entry(id);
  if (entry.entered_generation.load(std::memory_order_relaxed) != table.generation()) {
    entry.entered_generation.store(table.generation(), std::memory_order_relaxed);
  }
}

__attribute__((always_inline)) inline void Dispatcher::pop(ThreadStack& stack, bool unwinding) {
  if (__builtin_expect(stack.top().delivered != 0, 0)) deliver_end(stack, unwinding);
  stack.pop();
}

// What the inline fast path (regiontrace/detail/region_stack.hpp) does not
// take: a thread's first region, a selected region, a full stack; and every
// begin().
std::uint64_t Dispatcher::enter(RegionId id) {
  ThreadStack* stack = this_thread_stack();
  if (__builtin_expect(stack == nullptr, 0)) {
    stack = current_thread_stack();
    if (stack == nullptr) return 0;
  }
  const RoutingTable* t = table_.load(std::memory_order_acquire);
  if (t == nullptr) return 0;
  return push(*stack, *t, id, stack->next_token());
}

void Dispatcher::leave(std::uint64_t token, bool unwinding) {
  ThreadStack* stack = this_thread_stack();
  if (__builtin_expect(stack == nullptr, 0)) {
    stack = current_thread_stack();  // an end() on a thread that never began one
    if (stack == nullptr) return;
  }
  token &= ~kTokenDelivered;
  if (__builtin_expect(!stack->empty() && same_region(stack->top().token, token), 1)) {
    pop(*stack, unwinding);
    return;
  }
  leave_out_of_order(*stack, token, unwinding);
}

// Inlined into the exported functions below, which are their only callers:
// a call more costs ~6 instructions a side.
__attribute__((always_inline)) inline std::uint64_t Dispatcher::enter_selected(
    ThreadStack& stack, const RoutingTable& table, RegionId id, std::uint64_t selected) {
  return push_selected(stack, table, id, stack.next_token(), selected);
}

// A scope's end that the inline fast path did not take: unwinding when more
// exceptions are in flight than when the (delivered) region began.
__attribute__((always_inline)) inline void Dispatcher::leave_scope(std::uint64_t token) {
  ThreadStack* stack = this_thread_stack();
  if (__builtin_expect(stack == nullptr, 0)) {
    stack = current_thread_stack();
    if (stack == nullptr) return;
  }
  token &= ~kTokenDelivered;
  // Whether the frame was delivered is the frame's to say, not the token's:
  // a frame re-opened around an out-of-order end is delivered as the step
  // was then.
  if (__builtin_expect(!stack->empty() && same_region(stack->top().token, token), 1)) {
    const Frame& top = stack->top();
    pop(*stack, top.delivered != 0 && stack->uncaught_exceptions() > top.uncaught);
    return;
  }
  bool unwinding = false;
  for (std::uint32_t i = stack->depth(); i-- > 0;) {
    const Frame& f = stack->at(i);
    if (same_region(f.token, token)) {
      unwinding = f.delivered != 0 && stack->uncaught_exceptions() > f.uncaught;
      break;
    }
  }
  leave_out_of_order(*stack, token, unwinding);
}

// The exported entry points of <regiontrace/regiontrace.hpp>.
std::uint64_t enter(RegionId id) {
  return Dispatcher::instance().enter(id);
}
// RegionStack and RegionRouting are the public parts of the library's
// ThreadStack and RoutingTable (the only ones made).
std::uint64_t enter_selected(RegionStack* s, const RegionRouting* r, RegionId id,
                             std::uint64_t selected) {
  return Dispatcher::instance().enter_selected(*static_cast<ThreadStack*>(s),
                                               *static_cast<const RoutingTable*>(r), id, selected);
}
void leave(std::uint64_t token, bool unwinding) {
  Dispatcher::instance().leave(token, unwinding);
}
void leave_scope(std::uint64_t token) {
  Dispatcher::instance().leave_scope(token);
}
void event_sink_threw(const RegionRouting* r, const char* callback, const char* what) noexcept {
  try {
    Dispatcher::instance().event_sink_threw(
        *static_cast<const RoutingTable*>(r), callback,
        what != nullptr ? what : "an exception that is not a std::exception");
  } catch (...) {
    // Reporting it failed (out of memory): the sink is off all the same.
  }
}

void Dispatcher::leave_out_of_order(ThreadStack& stack, std::uint64_t token, bool unwinding) {
  std::uint32_t index = stack.depth();
  for (std::uint32_t i = stack.depth(); i-- > 0;) {
    if (same_region(stack.at(i).token, token)) {
      index = i;
      break;
    }
  }
  if (index == stack.depth()) {
    if (token_thread(token) != stack.number()) {
      log_once(LogLevel::kWarn, "end-other-thread",
               "regiontrace::end() was called on another thread than the begin() it ends; "
               "ignored (a region must end on the thread that opened it)");
    } else {
      log_once(LogLevel::kWarn, "end-unknown",
               "regiontrace::end() for a region that is not open (ended twice?); ignored");
    }
    return;
  }
  const std::string ended = registry_->entry(stack.at(index).id).name;
  const std::string inner = registry_->entry(stack.top().id).name;
  log_once(LogLevel::kWarn, "out-of-order:" + ended + ":" + inner,
           "region `" + ended + "` ended while `" + inner +
               "`, opened inside it, was still open; the inner regions were closed and "
               "reopened around its end (reported once)");
  std::vector<Frame> reopen;
  for (std::uint32_t i = index + 1; i < stack.depth(); ++i) reopen.push_back(stack.at(i));
  while (stack.depth() > index + 1) pop(stack, false);
  pop(stack, unwinding);
  const RoutingTable* t = table_.load(std::memory_order_acquire);
  for (const Frame& f : reopen) {
    if (t != nullptr) {
      push(stack, *t, f.id, f.token & ~kTokenDelivered);  // delivered as it is now
    } else {
      push_frame(&stack, f.id, f.generation, f.token, f.inside, f.delivered, f.ending, f.uncaught,
                 f.begin_ns);
    }
  }
}

// Asked before flattening a tensor nest: reads the stack as enter() does and
// makes none (a thread without one has no region open).
bool Dispatcher::tensor_wanted_here(TensorOrigin origin) {
  const RoutingTable* t = table_.load(std::memory_order_acquire);
  if (t == nullptr) return false;
  // A thread without a stack yet has no region open and no thread step:
  // the unfiltered sinks at the process's step.
  ThreadStack* stack = this_thread_stack();
  const std::uint64_t live =
      stack != nullptr ? tensor_live(*stack, *t) : live_.load(std::memory_order_relaxed);
  return (inside_mask(stack, *t) & tensor_family(*t, origin) & live) != 0;
}

void Dispatcher::close_thread(ThreadStack& stack) {
  while (!stack.empty()) pop(stack, false);
  close_thread_spans(stack);
}

}  // namespace regiontrace::detail
