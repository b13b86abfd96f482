// One per process: delivers region, step, mark, tensor and snapshot events
// to the sinks that selected them. Selection (regions, steps; ranks were
// applied when sinks were built) happens here, once, for all sinks.
//
// Four files, one per concern:
//   dispatcher_lifecycle.cpp  start, stop, fork; routing regions to sinks
//   dispatcher_hot_path.cpp   enter/leave: the per-thread stack, tokens, and
//                             delivering region begin/end events
//   dispatcher_spans.cpp      spans: per-thread buffers and their hand-over
//   dispatcher_events.cpp     building and delivering the other event kinds
// and event_builder.hpp for what they share: the "inside" mask and the
// fields every event carries.
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

#include "regiontrace/export.hpp"
#include "regiontrace/sdk/events.hpp"
#include "routing_table.hpp"
#include "sink_slot.hpp"

namespace regiontrace::detail {

class ThreadStack;
class SpanBuffer;
struct Frame;
class RegionRegistry;
struct RegionEntry;

class Dispatcher {
 public:
  static Dispatcher& instance() { return *instance_; }

  // Routes every known region to `slots` and starts delivering. Slots are
  // kept for the life of the process (sinks are never destroyed: see SinkSlot).
  void start(std::vector<std::unique_ptr<SinkSlot>> slots);
  // Stops delivering, then flushes and closes every sink.
  void stop();
  // Flushes every running sink, after handing it the spans every thread
  // holds; one that throws is switched off.
  void flush_sinks();
  // The flush thread's tick: the same, for the flight recorders
  // (kInterestPeriodicFlush) only. Never blocks the application's threads
  // longer than a span hand-over.
  void flush_flight_recorders();
  bool has_flight_recorders() const {
    const RoutingTable* t = table_.load(std::memory_order_acquire);
    return t != nullptr && t->flush_mask != 0;
  }
  // Forked child: forget the parent's sinks without touching their files.
  void abandon_after_fork();
  bool running() const { return table_.load(std::memory_order_acquire) != nullptr; }
  std::vector<const SinkSlot*> running_slots() const;

  std::uint64_t enter(RegionId id);
  // enter(id) with the inline code's readings: the thread's stack (not
  // full), the running table, the sinks that selected the region.
  std::uint64_t enter_selected(ThreadStack& stack, const RoutingTable& table, RegionId id,
                               std::uint64_t selected);
  void leave(std::uint64_t token, bool unwinding);
  void leave_scope(std::uint64_t token);
  // Ends every region still open on the calling thread (thread exit).
  void close_thread(ThreadStack& stack);

  void set_step(std::int64_t step);
  std::int64_t step() const { return step_.load(std::memory_order_relaxed); }
  // The calling thread's step for its tensor events (thread_step.hpp).
  void set_thread_step(std::int64_t step);
  std::int64_t thread_step();
  void mark(std::string_view name);
  void snapshot(std::string_view reason);

  // Tensors: is any tensor sink inside a selected region on this thread?
  bool tensor_wanted_here(TensorOrigin origin);
  void tensor(std::string_view label, const at::Tensor& tensor, TensorOrigin origin,
              std::string_view op);
  // core/torch installs its aten-op observer through this switch; it is
  // turned on while a running sink asks for op outputs.
  void set_op_observer_switch(void (*fn)(bool on));
  // The inline event path's catch: `table`'s event sink threw.
  void event_sink_threw(const RoutingTable& table, const char* callback, const char* what);

 private:
  Dispatcher();
  static Dispatcher* const instance_;
  // The running table, to the dispatcher and to the inline fast path.
  void publish(const RoutingTable* table) {
    table_.store(table, std::memory_order_release);
    g_region_routing.store(table, std::memory_order_release);
  }
  void route_new_region(const RegionEntry& entry);
  void route_region(RoutingTable& table, const RegionEntry& entry);
  std::uint64_t push(ThreadStack& stack, const RoutingTable& table, RegionId id,
                     std::uint64_t token);
  std::uint64_t push_selected(ThreadStack& stack, const RoutingTable& table, RegionId id,
                              std::uint64_t token, std::uint64_t selected);
  void pop(ThreadStack& stack, bool unwinding);
  __attribute__((noinline)) void note_entered(const RoutingTable& table, RegionId id);
  void report_awaited_never_entered(const RoutingTable& table);
  void deliver_end(ThreadStack& stack, bool unwinding);
  // Spans (dispatcher_spans.cpp): the thread's buffer made with its first
  // span; a span ended for the span sinks in `sinks`; handed over by the
  // owner (buffer full, thread exit) or by stop(). Open spans are frames.
  void make_span_buffer(ThreadStack& stack, const RoutingTable& table);
  void end_span(ThreadStack& stack, const RoutingTable& table, RegionId id, std::int64_t begin_ns,
                std::uint64_t sinks, std::int64_t end_ns, bool unwinding);
  void hand_over_spans(SpanBuffer& buffer, const RoutingTable* table, bool last);
  // Every thread's spans not handed over yet, and the ones open on it for
  // the sinks in `open_to`.
  void collect_spans(const RoutingTable& table, std::uint64_t enabled, std::uint64_t open_to);
  // Hands spans over, then flushes the sinks of `mask`.
  void flush_locked(std::uint64_t mask);
  void deliver_spans(const RoutingTable& table, std::uint64_t enabled, SpanBuffer& buffer,
                     const Span* spans, const std::uint64_t* sinks, std::size_t count, bool last);
  void close_thread_spans(ThreadStack& stack);
  void forget_spans_after_fork();
  void leave_out_of_order(ThreadStack& stack, std::uint64_t token, bool unwinding);
  void recompute_live_locked();
  // The running sinks a tensor event of `stack`'s thread may go to as far as
  // steps go: live_, or those selecting the thread's own step.
  std::uint64_t tensor_live(ThreadStack& stack, const RoutingTable& table);
  // Calls fn(sink) for every sink in `mask`; a sink that throws is switched off.
  template <typename Fn>
  void deliver(const RoutingTable& table, std::uint64_t mask, const char* callback, Fn&& fn);
  void fail(SinkSlot& slot, const char* callback, const char* what);
  // An event with the fields every kind carries (path, step, thread, time)
  // filled in; `mask` (the sinks it goes to) decides whether the clock is read.
  template <typename Event>
  Event make_event(ThreadStack* stack, const RoutingTable& table, std::uint64_t mask) const;
  RegionEvent region_event(ThreadStack& stack, RegionId id, std::uint32_t depth, bool ending,
                           std::int64_t time_ns, bool unwinding, std::int64_t begin_ns) const;

  RegionRegistry* registry_;
  std::atomic<const RoutingTable*> table_{nullptr};
  std::atomic<std::uint64_t> enabled_{0};  // running and not failed
  std::atomic<std::uint64_t> live_{0};     // enabled and the current step selected
  std::atomic<std::int64_t> step_{kNoStep};
  std::atomic<std::uint32_t> generation_{0};

  std::mutex control_mutex_;  // start/stop, step masks, failures
  // Held while sinks flush and while stop() closes them: flush() never runs
  // beside itself or close(), and set_step() (control_mutex_) never waits
  // for a flush.
  std::mutex flush_mutex_;
  std::vector<std::unique_ptr<SinkSlot>> slots_;          // running
  std::vector<std::unique_ptr<SinkSlot>> retired_slots_;  // kept alive, never destroyed
  std::vector<std::unique_ptr<RoutingTable>> tables_;     // current one is last; all kept
  std::mutex span_threads_mutex_;                         // the threads with a SpanBuffer
  std::vector<ThreadStack*> span_threads_;                // (before a buffer's own lock)
  void (*op_observer_switch_)(bool) = nullptr;
  bool op_observer_on_ = false;
};

template <typename Fn>
__attribute__((always_inline)) inline void Dispatcher::deliver(const RoutingTable& table,
                                                               std::uint64_t mask,
                                                               const char* callback, Fn&& fn) {
  while (mask != 0) {
    const int i = __builtin_ctzll(mask);
    mask &= mask - 1;
    SinkSlot* slot = table.slots()[static_cast<std::size_t>(i)];
    try {
      fn(*slot->sink);
    } catch (const std::exception& e) {
      fail(*slot, callback, e.what());
    } catch (...) {
      fail(*slot, callback, "an exception that is not a std::exception");
    }
  }
}

// The calling thread's region stack; nullptr while the thread exits, and for
// a thread past kMaxTrackedThreads (its regions are not tracked).
ThreadStack* current_thread_stack();
std::int64_t now_ns();
// Decides the library clock's source now (it calibrates on its first
// reading otherwise), so that inline code knows whether to read
// CLOCK_MONOTONIC itself (g_clock_monotonic).
void settle_clock();

// Tests: sets the number the next new thread's counter starts from and
// returns the old value, so that the thread limit can be reached.
REGIONTRACE_INTERNAL std::uint64_t exchange_thread_counter_for_testing(std::uint64_t value);

}  // namespace regiontrace::detail
