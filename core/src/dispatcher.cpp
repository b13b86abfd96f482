#include "dispatcher.hpp"

#include <time.h>

#include <exception>
#include <set>
#include <string>

#include "logger.hpp"
#include "region_registry.hpp"
#include "regiontrace/regiontrace.hpp"
#include "thread_stack.hpp"

namespace regiontrace::detail {
namespace {

std::atomic<std::uint64_t> g_thread_counter{0};

// The pointer is trivially destructible, so reaching it costs one TLS access;
// the cleaner (non-trivial) is touched only once per thread, when the stack
// is created, and ends what the thread left open when it exits.
thread_local ThreadStack* t_stack __attribute__((tls_model("initial-exec"))) = nullptr;
thread_local bool t_stack_gone __attribute__((tls_model("initial-exec"))) = false;

struct StackCleaner {
  ~StackCleaner() {
    ThreadStack* s = t_stack;
    t_stack = nullptr;
    t_stack_gone = true;
    if (s != nullptr) {
      Dispatcher::instance().close_thread(*s);
      delete s;
    }
  }
};
thread_local StackCleaner t_cleaner;

template <typename Fn>
void for_each_bit(std::uint64_t mask, Fn&& fn) {
  while (mask != 0) {
    const int i = __builtin_ctzll(mask);
    mask &= mask - 1;
    fn(i);
  }
}

}  // namespace

std::int64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

ThreadStack* current_thread_stack() {
  ThreadStack* s = t_stack;
  if (s != nullptr || t_stack_gone) return s;
  s = new ThreadStack(++g_thread_counter);
  t_stack = s;
  (void)&t_cleaner;  // odr-use: registers the cleaner for this thread
  return s;
}

// Built when the library loads (before any application code can open a
// region) and never destroyed: regions may run in exit handlers. A plain
// pointer keeps the hot path free of function-local-static guards.
Dispatcher* const Dispatcher::instance_ = new Dispatcher();

Dispatcher::Dispatcher() : registry_(&RegionRegistry::instance()) {}

template <typename Fn>
void Dispatcher::deliver(const RoutingTable& table, std::uint64_t mask, const char* callback,
                         Fn&& fn) {
  for_each_bit(mask, [&](int i) {
    SinkSlot* slot = table.slots()[static_cast<std::size_t>(i)];
    try {
      fn(*slot->sink);
    } catch (const std::exception& e) {
      fail(*slot, callback, e.what());
    } catch (...) {
      fail(*slot, callback, "an exception that is not a std::exception");
    }
  });
}

void Dispatcher::fail(SinkSlot& slot, const char* callback, const char* what) {
  if (slot.failed.exchange(true)) return;
  // No lock: this may run inside start() (on_region_routed) which holds it.
  const std::uint64_t bit = std::uint64_t{1} << slot.index;
  enabled_.fetch_and(~bit);
  live_.fetch_and(~bit);
  log(LogLevel::kError, "sink `" + slot.name + "` threw from " + callback + ": " + what +
                            "; it is switched off, the other sinks go on");
  try {
    slot.sink->flush();
    slot.sink->close();
  } catch (...) {
    log(LogLevel::kError, "sink `" + slot.name + "` also failed to close");
  }
}

void Dispatcher::recompute_live_locked() {
  const RoutingTable* t = table_.load(std::memory_order_relaxed);
  std::uint64_t live = 0;
  if (t != nullptr) {
    const std::int64_t s = step_.load(std::memory_order_relaxed);
    for (const SinkSlot* slot : t->slots()) {
      if (slot->steps.contains(s)) live |= std::uint64_t{1} << slot->index;
    }
  }
  live_.store(live & enabled_.load(std::memory_order_relaxed), std::memory_order_relaxed);
}

void Dispatcher::route_region(RoutingTable& table, const RegionEntry& entry) {
  std::uint64_t mask = 0;
  for (SinkSlot* slot : table.slots()) {
    if (slot->regions.matches(entry.name)) mask |= std::uint64_t{1} << slot->index;
  }
  table.set_region_mask(entry.id, mask);
  const RegionInfo info{entry.id, entry.name, entry.description, entry.color};
  deliver(table, mask & enabled_.load(), "on_region_routed",
          [&](Sink& s) { s.on_region_routed(info); });
}

void Dispatcher::route_new_region(const RegionEntry& entry) {
  // Runs under the registry lock, so tables only change here and in start/stop.
  RoutingTable* t = tables_.empty() ? nullptr : tables_.back().get();
  if (t == nullptr || table_.load() != t) return;
  if (entry.id >= t->capacity()) {
    tables_.push_back(t->grown(std::max<std::size_t>(t->capacity() * 2, entry.id + 1)));
    t = tables_.back().get();
  }
  route_region(*t, entry);
  table_.store(t, std::memory_order_release);
}

void Dispatcher::start(std::vector<std::unique_ptr<SinkSlot>> slots) {
  RegionRegistry& registry = RegionRegistry::instance();
  std::lock_guard<std::mutex> registry_lock(registry.mutex());
  std::lock_guard<std::mutex> lock(control_mutex_);
  std::vector<SinkSlot*> raw;
  std::uint64_t enabled = 0;
  for (auto& s : slots) {
    raw.push_back(s.get());
    enabled |= std::uint64_t{1} << s->index;
  }
  const std::uint32_t generation = generation_.fetch_add(1) + 1;
  const std::size_t capacity = std::max<std::size_t>(256, registry.size() * 2);
  tables_.push_back(std::make_unique<RoutingTable>(std::move(raw), capacity, generation));
  RoutingTable* t = tables_.back().get();
  slots_ = std::move(slots);
  enabled_.store(enabled);
  for (std::size_t i = 0; i < registry.size(); ++i) {
    route_region(*t, registry.entry(static_cast<RegionId>(i)));
  }
  registry.set_new_region_hook([this](const RegionEntry& e) { route_new_region(e); });
  table_.store(t, std::memory_order_release);
  recompute_live_locked();
  if (t->op_mask != 0 && op_observer_switch_ != nullptr) {
    op_observer_switch_(true);
    op_observer_on_ = true;
  }
}

void Dispatcher::report_awaited_never_entered(const RoutingTable& table) {
  std::set<std::string> reported;
  for (const SinkSlot* slot : table.slots()) {
    for (const std::string& name : slot->regions.awaited()) {
      const auto id = registry_->find(name);
      if (id && registry_->entry(*id).entered_generation.load() == table.generation()) continue;
      if (!reported.insert(name).second) continue;
      log(LogLevel::kWarn, "region `" + name + "` was selected (" + slot->regions.origin() +
                               ") but never entered: no region of that name ran while the "
                               "sinks were on");
    }
  }
}

void Dispatcher::stop() {
  if (const RoutingTable* t = table_.load(std::memory_order_acquire)) {
    report_awaited_never_entered(*t);
  }
  std::vector<std::unique_ptr<SinkSlot>> stopping;
  {
    RegionRegistry& registry = RegionRegistry::instance();
    std::lock_guard<std::mutex> registry_lock(registry.mutex());
    std::lock_guard<std::mutex> lock(control_mutex_);
    if (table_.load() == nullptr) return;
    registry.set_new_region_hook(nullptr);
    table_.store(nullptr, std::memory_order_release);
    enabled_.store(0);
    live_.store(0);
    stopping = std::move(slots_);
    slots_.clear();
    if (op_observer_on_ && op_observer_switch_ != nullptr) op_observer_switch_(false);
    op_observer_on_ = false;
  }
  for (auto& slot : stopping) {
    if (slot->failed.load()) continue;
    try {
      slot->sink->flush();
      slot->sink->close();
    } catch (const std::exception& e) {
      log(LogLevel::kError, "sink `" + slot->name + "` failed while closing: " + e.what());
    } catch (...) {
      log(LogLevel::kError, "sink `" + slot->name + "` failed while closing");
    }
  }
  std::lock_guard<std::mutex> lock(control_mutex_);
  for (auto& slot : stopping) retired_slots_.push_back(std::move(slot));
}

void Dispatcher::abandon_after_fork() {
  // Only this thread survives the fork; locks held by others are gone with
  // them, so nothing here may lock. The sinks' buffers and files belong to
  // the parent: leave them alone.
  table_.store(nullptr);
  enabled_.store(0);
  live_.store(0);
  new (&control_mutex_) std::mutex();
  for (auto& slot : slots_) slot.release();  // NOLINT: intentionally leaked
  slots_.clear();
  op_observer_on_ = false;
}

std::vector<const SinkSlot*> Dispatcher::running_slots() const {
  std::vector<const SinkSlot*> out;
  const RoutingTable* t = table_.load(std::memory_order_acquire);
  if (t == nullptr) return out;
  for (const SinkSlot* s : t->slots()) out.push_back(s);
  return out;
}

__attribute__((noinline, cold)) std::uint64_t report_stack_full() {
  log_once(LogLevel::kWarn, "stack-full",
           "regions nested deeper than " + std::to_string(ThreadStack::kMaxDepth) +
               " on one thread; the deeper ones are not recorded");
  return 0;
}

// The hot path: push and pop are inlined into enter/leave; building and
// delivering events is kept out of line so the unrouted case stays a few
// loads and stores.
__attribute__((always_inline)) inline std::uint64_t Dispatcher::push(ThreadStack& stack,
                                                                     const RoutingTable& table,
                                                                     RegionId id,
                                                                     std::uint64_t token) {
  if (__builtin_expect(stack.full(), 0)) return report_stack_full();
  const std::uint64_t selected = table.region_mask(id);
  const std::uint64_t outer = stack.empty() || stack.top().generation != table.generation()
                                  ? table.unfiltered_mask
                                  : stack.top().inside;
  const std::uint64_t delivered =
      selected & table.region_event_mask & live_.load(std::memory_order_relaxed);
  Frame& f = stack.push();
  f.id = id;
  f.generation = table.generation();
  f.token = token;
  f.inside = outer | selected;
  f.delivered = delivered;
  if (__builtin_expect(selected == 0, 1)) return token;
  if (__builtin_expect(table.track_entered, 0)) note_entered(table, id);
  if (delivered == 0) return token;
  deliver_begin(stack, table, f);
  return token | ThreadStack::kDeliveredBit;
}

void Dispatcher::note_entered(const RoutingTable& table, RegionId id) {
  const RegionEntry& entry = registry_->entry(id);
  if (entry.entered_generation.load(std::memory_order_relaxed) != table.generation()) {
    entry.entered_generation.store(table.generation(), std::memory_order_relaxed);
  }
}

void Dispatcher::deliver_begin(ThreadStack& stack, const RoutingTable& table, const Frame& f) {
  RegionEvent ev;
  ev.id = f.id;
  ev.name = registry_->entry(f.id).name;
  ev.depth = static_cast<int>(stack.depth()) - 1;
  ev.path = stack.path(stack.depth());
  ev.step = step_.load(std::memory_order_relaxed);
  ev.thread_id = stack.number();
  ev.time_ns = (f.delivered & table.time_mask) != 0 ? now_ns() : 0;
  deliver(table, f.delivered, "on_region_begin", [&](Sink& s) { s.on_region_begin(ev); });
}

__attribute__((always_inline)) inline void Dispatcher::pop(ThreadStack& stack, bool unwinding) {
  if (__builtin_expect(stack.top().delivered != 0, 0)) deliver_end(stack, unwinding);
  stack.pop();
}

void Dispatcher::deliver_end(ThreadStack& stack, bool unwinding) {
  const Frame& f = stack.top();
  const RoutingTable* t = table_.load(std::memory_order_acquire);
  const std::uint64_t mask = t != nullptr && f.generation == t->generation()
                                 ? f.delivered & enabled_.load(std::memory_order_relaxed)
                                 : 0;
  if (mask == 0) return;
  RegionEvent ev;
  ev.id = f.id;
  ev.name = registry_->entry(f.id).name;
  ev.depth = static_cast<int>(stack.depth()) - 1;
  ev.path = stack.path(stack.depth());
  ev.step = step_.load(std::memory_order_relaxed);
  ev.thread_id = stack.number();
  ev.time_ns = (mask & t->time_mask) != 0 ? now_ns() : 0;
  ev.unwinding = unwinding;
  deliver(*t, mask, "on_region_end", [&](Sink& s) { s.on_region_end(ev); });
}

inline std::uint64_t Dispatcher::enter(RegionId id) {
  ThreadStack* stack = t_stack;
  if (__builtin_expect(stack == nullptr, 0)) {
    stack = current_thread_stack();
    if (stack == nullptr) return 0;
  }
  const RoutingTable* t = table_.load(std::memory_order_acquire);
  if (t == nullptr) return 0;
  return push(*stack, *t, id, stack->next_token());
}

inline void Dispatcher::leave(std::uint64_t token, bool unwinding) {
  ThreadStack* stack = t_stack;
  if (__builtin_expect(stack == nullptr, 0)) {
    stack = current_thread_stack();  // an end() on a thread that never began one
    if (stack == nullptr) return;
  }
  token &= ~ThreadStack::kDeliveredBit;
  if (__builtin_expect(!stack->empty() && stack->top().token == token, 1)) {
    pop(*stack, unwinding);
    return;
  }
  leave_out_of_order(*stack, token, unwinding);
}

// The exported entry points of <regiontrace/regiontrace.hpp>, here so that
// enter/leave inline into them.
std::uint64_t enter(RegionId id) {
  return Dispatcher::instance().enter(id);
}
void leave(std::uint64_t token, bool unwinding) {
  Dispatcher::instance().leave(token, unwinding);
}

void Dispatcher::leave_out_of_order(ThreadStack& stack, std::uint64_t token, bool unwinding) {
  std::uint32_t index = stack.depth();
  for (std::uint32_t i = stack.depth(); i-- > 0;) {
    if (stack.at(i).token == token) {
      index = i;
      break;
    }
  }
  if (index == stack.depth()) {
    if (ThreadStack::thread_of(token) != stack.number()) {
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
      push(stack, *t, f.id, f.token);
    } else {
      stack.push() = f;
    }
  }
}

void Dispatcher::close_thread(ThreadStack& stack) {
  while (!stack.empty()) pop(stack, false);
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
  ThreadStack* stack = current_thread_stack();
  StepEvent ev;
  ev.step = step;
  ev.previous = previous;
  ev.thread_id = stack != nullptr ? stack->number() : 0;
  ev.time_ns = (mask & t->time_mask) != 0 ? now_ns() : 0;
  deliver(*t, mask, "on_step", [&](Sink& s) { s.on_step(ev); });
}

void Dispatcher::mark(std::string_view name) {
  const RoutingTable* t = table_.load(std::memory_order_acquire);
  ThreadStack* stack = current_thread_stack();
  if (t == nullptr || stack == nullptr) return;
  const std::uint64_t inside = stack->empty() || stack->top().generation != t->generation()
                                   ? t->unfiltered_mask
                                   : stack->top().inside;
  const std::uint64_t mask = inside & t->mark_mask & live_.load(std::memory_order_relaxed);
  if (mask == 0) return;
  MarkEvent ev;
  ev.name = name;
  ev.path = stack->path(stack->depth());
  ev.step = step_.load(std::memory_order_relaxed);
  ev.thread_id = stack->number();
  ev.time_ns = (mask & t->time_mask) != 0 ? now_ns() : 0;
  deliver(*t, mask, "on_mark", [&](Sink& s) { s.on_mark(ev); });
}

void Dispatcher::snapshot(std::string_view reason) {
  const RoutingTable* t = table_.load(std::memory_order_acquire);
  ThreadStack* stack = current_thread_stack();
  if (t == nullptr || stack == nullptr) return;
  const std::uint64_t mask = t->snapshot_mask & enabled_.load(std::memory_order_relaxed);
  if (mask == 0) return;
  SnapshotRequest ev;
  ev.reason = reason;
  ev.path = stack->path(stack->depth());
  ev.step = step_.load(std::memory_order_relaxed);
  ev.thread_id = stack->number();
  ev.time_ns = (mask & t->time_mask) != 0 ? now_ns() : 0;
  deliver(*t, mask, "on_snapshot_request", [&](Sink& s) { s.on_snapshot_request(ev); });
}

bool Dispatcher::tensor_wanted_here(TensorOrigin origin) {
  const RoutingTable* t = table_.load(std::memory_order_acquire);
  ThreadStack* stack = t_stack;
  if (t == nullptr) return false;
  const std::uint64_t family = origin == TensorOrigin::kOpOutput ? t->op_mask : t->tensor_mask;
  std::uint64_t inside = t->unfiltered_mask;
  if (stack != nullptr && !stack->empty() && stack->top().generation == t->generation()) {
    inside = stack->top().inside;
  }
  return (inside & family & live_.load(std::memory_order_relaxed)) != 0;
}

void Dispatcher::tensor(std::string_view label, const at::Tensor& tensor, TensorOrigin origin,
                        std::string_view op) {
  const RoutingTable* t = table_.load(std::memory_order_acquire);
  ThreadStack* stack = current_thread_stack();
  if (t == nullptr || stack == nullptr) return;
  const bool current = !stack->empty() && stack->top().generation == t->generation();
  const std::uint64_t inside = current ? stack->top().inside : t->unfiltered_mask;
  const std::uint64_t family = origin == TensorOrigin::kOpOutput ? t->op_mask : t->tensor_mask;
  const std::uint64_t mask = inside & family & live_.load(std::memory_order_relaxed);
  if (mask == 0) return;
  TensorEvent ev;
  ev.label = label;
  ev.module =
      current ? std::string_view(registry_->entry(stack->top().id).name) : std::string_view();
  ev.path = stack->path(stack->depth());
  ev.op = op;
  ev.depth = static_cast<int>(stack->depth());
  ev.step = step_.load(std::memory_order_relaxed);
  ev.thread_id = stack->number();
  ev.time_ns = (mask & t->time_mask) != 0 ? now_ns() : 0;
  ev.origin = origin;
  ev.tensor = &tensor;
  deliver(*t, mask, "on_tensor", [&](Sink& s) { s.on_tensor(ev); });
}

void Dispatcher::set_op_observer_switch(void (*fn)(bool on)) {
  std::lock_guard<std::mutex> lock(control_mutex_);
  op_observer_switch_ = fn;
  const RoutingTable* t = table_.load();
  if (fn != nullptr && t != nullptr && t->op_mask != 0 && !op_observer_on_) {
    fn(true);
    op_observer_on_ = true;
  }
}

}  // namespace regiontrace::detail
