#include "callback_gate.hpp"

#include <array>
#include <new>
#include <type_traits>
#include <unordered_set>
#include <utility>

#include "calls_under_way.hpp"
#include "session_slots.hpp"

namespace regiontrace::torch_profiler {
namespace {

// A class with static members in later 2.x, an enum before: not constexpr.
const c10::DebugInfoKind kProfilerSlot = c10::DebugInfoKind::PROFILER_STATE;

template <int Slot>
std::uint64_t handle_of(const at::RecordFunction& fn) {
  if constexpr (Slot == kTaggedSlot) {
    return fn.handle();
  } else {
    return 0;
  }
}

// A handle drawn now: every op made later gets a higher one.
std::uint64_t draw_handle() {
  at::StepCallbacks ids;
  ids.needs_ids_ = true;
  const at::RecordFunction probe(std::move(ids));  // no callbacks: nothing runs
  return probe.handle();
}

struct GatePair {
  at::RecordFunctionCallback::StartCallback start;
  at::RecordFunctionCallback::EndCallback end;
};

}  // namespace

constinit CallbackGate g_callback_gate;
// Constructed before any constructor runs and never destroyed: an op may
// pass the gate in a static initialiser, and the sink is closed from an exit
// handler that runs after static destructors.
static_assert(std::is_trivially_destructible_v<CallbackGate>);

// Whether the live session is the one `Slot` names, for an op made with
// `handle`. Read in a call counted by CallUnderWay.
template <int Slot>
bool CallbackGate::slot_is_live(std::uint64_t handle) {
  if (g_callback_gate.live_.load(std::memory_order_acquire) == nullptr) return false;
  if (g_session_slots.live_slot() != Slot) return false;
  if constexpr (Slot == kTaggedSlot) {
    return handle >= g_session_slots.first_handle();
  } else {
    return true;
  }
}

template <int Slot>
std::unique_ptr<at::ObserverContext> CallbackGate::gated_start(const at::RecordFunction& fn) {
  CallbackGate& gate = g_callback_gate;
  const c10::DebugInfoBase* live = gate.live_.load(std::memory_order_acquire);
  // A thread records while it carries the live session's state: attached,
  // or inheriting the state of an attached thread.
  if (live == nullptr || c10::ThreadLocalDebugInfo::get(kProfilerSlot) != live) {
    gate.note_refused_outside();
    return nullptr;
  }
  if (gate.refusals_.load(std::memory_order_relaxed) != 0) {
    gate.refusals_.store(0, std::memory_order_relaxed);  // "in a row"
  }
  // Counted while it runs: close() shuts the gate, then waits for the calls
  // under way (they never span application code) before libtorch reads and
  // frees the events, which this call appends to. An op made before the
  // session went live may carry an earlier session's pair.
  const std::uint64_t handle = handle_of<Slot>(fn);
  const CallUnderWay call([live, handle] {
    return g_callback_gate.live_.load(std::memory_order_acquire) == live &&
           slot_is_live<Slot>(handle);
  });
  if (!call.entered()) return nullptr;
  if (!gate.budget_.take_op()) return nullptr;
  std::unique_ptr<at::ObserverContext> ctx = gate.real_start_.load(std::memory_order_relaxed)(fn);
  if constexpr (Slot != kTaggedSlot) {
    if (ctx != nullptr) call.op_opened(Slot);
  }
  return ctx;
}

template <int Slot>
void CallbackGate::gated_end(const at::RecordFunction& fn, at::ObserverContext* ctx) {
  if (ctx == nullptr) return;  // the profiler did not start it
  // An op that ends after its session finished (on another thread, or a
  // scope left after the window closed) is not handed to the profiler,
  // whose events are gone by then.
  const std::uint64_t handle = handle_of<Slot>(fn);
  const CallUnderWay call([handle] { return slot_is_live<Slot>(handle); });
  if (call.entered()) {
    g_callback_gate.real_end_.load(std::memory_order_relaxed)(fn, ctx);
  } else {
    g_callback_gate.late_ends_.fetch_add(1, std::memory_order_relaxed);
  }
  // After the end callback: the slot is free once every op begun through it
  // has left the profiler.
  if constexpr (Slot != kTaggedSlot) call.op_closed(Slot);
}

template <int... Slots>
auto CallbackGate::gate_pairs(std::integer_sequence<int, Slots...>) {
  return std::array<GatePair, sizeof...(Slots)>{{{&gated_start<Slots>, &gated_end<Slots>}...}};
}

// The profiler's callback behind the gate of `slot`.
at::RecordFunctionCallback CallbackGate::gated_copy(const at::RecordFunctionCallback& cb,
                                                    int slot) {
  // By slot, the tagged one last.
  static const auto pairs = gate_pairs(std::make_integer_sequence<int, kTaggedSlot + 1>());
  std::unordered_set<at::RecordScope, std::hash<at::RecordScope>> scopes;
  for (std::size_t i = 0; i < static_cast<std::size_t>(at::RecordScope::NUM_SCOPES); ++i) {
    if (cb.checkScope(static_cast<at::RecordScope>(i)))
      scopes.insert(static_cast<at::RecordScope>(i));
  }
  at::RecordFunctionCallback gated(pairs[slot].start, pairs[slot].end);
  gated.needsInputs(cb.needsInputs())
      .needsOutputs(cb.needsOutputs())
      .needsIds(cb.needsIds() || slot == kTaggedSlot)
      .samplingProb(cb.samplingProb())
      .scopes(scopes);
  return gated;
}

void CallbackGate::install(const at::RecordFunctionCallback& profiler, int slot) {
  real_start_.store(profiler.start());
  real_end_.store(profiler.end());
  const at::CallbackHandle handle = at::addGlobalCallback(gated_copy(profiler, slot));
  std::lock_guard<std::mutex> lock(switch_mutex_);
  handle_.store(handle);
  on_.store(true);
  refusals_.store(0);
  attached_.store(0);
}

void CallbackGate::remove_inherited() {
  if (const at::CallbackHandle inherited = inherited_.exchange(0)) at::removeCallback(inherited);
}

void CallbackGate::open(const c10::DebugInfoBase* state, int slot, std::int64_t op_budget) {
  budget_.reset(op_budget);
  // After the previous session finished, before any op can see this one.
  prepare_calls_under_way();
  g_session_slots.name_live(slot, slot == kTaggedSlot ? draw_handle() : 0);
  live_.store(state, std::memory_order_release);
}

void CallbackGate::close(const c10::DebugInfoBase* state) {
  const c10::DebugInfoBase* expected = state;
  live_.compare_exchange_strong(expected, nullptr);  // every thread stops recording
  wait_for_calls_under_way();
}

bool CallbackGate::release(at::CallbackHandle handle) {
  std::lock_guard<std::mutex> lock(switch_mutex_);  // no switch under way
  return handle != 0 && handle_.compare_exchange_strong(handle, 0);
}

bool CallbackGate::close_in_child() {
  const bool was_live = live_.exchange(nullptr) != nullptr;
  forget_calls_in_child();
  inherited_.store(handle_.exchange(0));
  // Another thread of the parent may have held it at the fork: the child
  // has only this thread, and a fresh mutex.
  new (&switch_mutex_) std::mutex();
  return was_live;
}

void CallbackGate::note_refused_outside() {
  if (attached_.load(std::memory_order_relaxed) != 0) return;
  if (refusals_.fetch_add(1, std::memory_order_relaxed) + 1 == kRefusalsToSwitchOff) switch_off();
}

// Off only while no thread is attached. An attach increments attached_,
// then reads on_; switching off writes on_, then reads attached_ again (all
// sequentially consistent): either the attaching thread sees "off" and
// switches the gate back on, or this sees it attached and leaves the gate
// on. Never off under an attached thread.
void CallbackGate::switch_off() {
  std::lock_guard<std::mutex> lock(switch_mutex_);
  const at::CallbackHandle handle = handle_.load();
  if (handle == 0 || !on_.load() || attached_.load() != 0) return;
  on_.store(false);
  if (attached_.load() != 0) {
    on_.store(true);
    return;
  }
  at::disableCallback(handle);
  refusals_.store(0);
}

void CallbackGate::switch_on() {
  std::lock_guard<std::mutex> lock(switch_mutex_);
  const at::CallbackHandle handle = handle_.load();
  if (handle == 0 || on_.load()) return;
  at::reenableCallback(handle);
  refusals_.store(0);
  on_.store(true);
}

}  // namespace regiontrace::torch_profiler
