// Dispatcher, event delivery: step, mark, snapshot and tensor events (region
// begin and end are delivered by the hot path, dispatcher_hot_path.cpp).
// Each kind decides which sinks get it, then builds its event with
// make_event (the shared fields) and delivers it.
#include "dispatcher.hpp"
#include "event_builder.hpp"
#include "region_registry.hpp"
#include "regiontrace/sdk/clock.hpp"
#include "thread_stack.hpp"

namespace regiontrace::detail {

// The library's clock: CLOCK_MONOTONIC nanoseconds from the SDK's TSC-based
// clock (a timed region pair reads it twice, and clock_gettime costs ~23 ns
// here against ~10 ns). Constant-initialised and trivially destructible, so
// regions in static initialisers and exit handlers read it too; its segments
// are mirrored in g_clock_segment for Region's inline code, so that spans
// stamped there and here share one calibration and nest.
std::atomic<const sdk::clock::Segment*> g_clock_segment{nullptr};
namespace {
sdk::clock::CalibratedClock g_clock(sdk::clock::CalibratedClock::Source::kTsc, &g_clock_segment);
}  // namespace

std::atomic<bool> g_clock_monotonic{false};

std::int64_t now_ns() {
  return g_clock.now_ns();
}

void settle_clock() {
  // uses_tsc() calibrates, once per process (~200 us with the TSC).
  g_clock_monotonic.store(!g_clock.uses_tsc(), std::memory_order_relaxed);
}

// Inlined into every caller: out of line it costs a routed region pair ~3 ns.
template <typename Event>
__attribute__((always_inline)) inline Event Dispatcher::make_event(ThreadStack* stack,
                                                                   const RoutingTable& table,
                                                                   std::uint64_t mask) const {
  Event ev;
  if constexpr (HasPath<Event>::value) {
    if (stack != nullptr) ev.path = stack->path(stack->depth());
  }
  ev.step = step_.load(std::memory_order_relaxed);
  ev.thread_id = stack != nullptr ? stack->number() : 0;
  ev.time_ns = (mask & table.time_mask) != 0 ? now_ns() : 0;
  return ev;
}

void Dispatcher::set_step(std::int64_t step) {
  const std::int64_t previous = step_.exchange(step, std::memory_order_relaxed);
  const RoutingTable* t = table_.load(std::memory_order_acquire);
  if (t == nullptr) return;
  {
    std::lock_guard<std::mutex> lock(control_mutex_);
    recompute_live_locked();
  }
  const std::uint64_t mask = t->step_mask & enabled_.load(std::memory_order_relaxed);
  if (mask == 0) return;
  StepEvent ev = make_event<StepEvent>(current_thread_stack(), *t, mask);
  ev.step = step;  // not step_: another thread may have set the next one already
  ev.previous = previous;
  deliver(*t, mask, "on_step", [&](Sink& s) { s.on_step(ev); });
}

void Dispatcher::set_thread_step(std::int64_t step) {
  ThreadStack* stack = current_thread_stack();
  if (stack == nullptr) return;  // an untracked thread sends no tensor events
  stack->tensor_step = step;
  stack->tensor_step_table = nullptr;  // its sinks: at the next tensor event
}

std::int64_t Dispatcher::thread_step() {
  const ThreadStack* stack = current_thread_stack();
  return stack != nullptr ? stack->tensor_step : kNoStep;
}

std::uint64_t Dispatcher::tensor_live(ThreadStack& stack, const RoutingTable& table) {
  if (stack.tensor_step == kNoStep) return live_.load(std::memory_order_relaxed);
  if (stack.tensor_step_table != &table) {
    // A table's slots and their step filters never change (a restart makes
    // a new table), so the answer holds until the table changes.
    std::uint64_t sinks = 0;
    for (const SinkSlot* slot : table.slots()) {
      if (slot->steps.contains(stack.tensor_step)) sinks |= std::uint64_t{1} << slot->index;
    }
    stack.tensor_step_sinks = sinks;
    stack.tensor_step_table = &table;
  }
  return stack.tensor_step_sinks & enabled_.load(std::memory_order_relaxed);
}

void Dispatcher::mark(std::string_view name) {
  const RoutingTable* t = table_.load(std::memory_order_acquire);
  ThreadStack* stack = current_thread_stack();
  if (t == nullptr || stack == nullptr) return;
  const std::uint64_t mask =
      inside_mask(stack, *t) & t->mark_mask & live_.load(std::memory_order_relaxed);
  if (mask == 0) return;
  MarkEvent ev = make_event<MarkEvent>(stack, *t, mask);
  ev.name = name;
  deliver(*t, mask, "on_mark", [&](Sink& s) { s.on_mark(ev); });
}

void Dispatcher::snapshot(std::string_view reason) {
  const RoutingTable* t = table_.load(std::memory_order_acquire);
  ThreadStack* stack = current_thread_stack();
  if (t == nullptr || stack == nullptr) return;
  const std::uint64_t mask = t->snapshot_mask & enabled_.load(std::memory_order_relaxed);
  if (mask == 0) return;
  SnapshotRequest ev = make_event<SnapshotRequest>(stack, *t, mask);
  ev.reason = reason;
  deliver(*t, mask, "on_snapshot_request", [&](Sink& s) { s.on_snapshot_request(ev); });
}

void Dispatcher::tensor(std::string_view label, const at::Tensor& tensor, TensorOrigin origin,
                        std::string_view op) {
  const RoutingTable* t = table_.load(std::memory_order_acquire);
  ThreadStack* stack = current_thread_stack();
  if (t == nullptr || stack == nullptr) return;
  const std::uint64_t mask =
      inside_mask(stack, *t) & tensor_family(*t, origin) & tensor_live(*stack, *t);
  if (mask == 0) return;
  TensorEvent ev = make_event<TensorEvent>(stack, *t, mask);
  if (stack->tensor_step != kNoStep) ev.step = stack->tensor_step;
  ev.label = label;
  ev.module = top_is_current(stack, *t) ? std::string_view(registry_->entry(stack->top().id).name)
                                        : std::string_view();
  ev.op = op;
  ev.depth = static_cast<int>(stack->depth());
  ev.origin = origin;
  ev.tensor = &tensor;
  deliver(*t, mask, "on_tensor", [&](Sink& s) { s.on_tensor(ev); });
}

}  // namespace regiontrace::detail
