// The gate in front of libtorch's profiler callback.
//
// One callback registered for every thread, which hands an op to the
// profiler's own callback only on a thread that carries the live session's
// state (ProfilerSession attaches a thread by pushing that state onto its
// debug info), within the session's op budget, and only while the session
// is live: switching a thread on or off is a push or pop (~0.2 us), where a
// thread-local callback per thread would rebuild libtorch's callback tables
// (~2 us) each time.
//
// One session is live at a time (one profiler per process), so the gate is
// one for the process. The profiler's own callbacks are the same functions
// for every session; they are atomics only because an op still running on
// another thread may read them while a new session starts.
//
// A registered callback costs every op in the process a RecordFunction
// (~250 ns, as much as a 32x32 matmul) even where the gate refuses it. So
// when no thread is attached and kRefusalsToSwitchOff ops in a row were
// refused, the gate is disabled in libtorch's table (ops then cost nothing),
// and the next attach enables it again: libtorch rebuilds each thread's
// callback list once then (~1-2 us), once per stretch outside the windows,
// not per region: regions entered back to back never reach the count.
#pragma once

#include <ATen/record_function.h>
#include <c10/util/ThreadLocalDebugInfo.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <utility>

#include "op_budget.hpp"

namespace regiontrace::torch_profiler {

class CallbackGate {
 public:
  static constexpr std::int64_t kRefusalsToSwitchOff = 256;

  // Registers `profiler`'s callback behind the gate for the session that
  // takes `slot` (session_slots.hpp). While no session is live.
  void install(const at::RecordFunctionCallback& profiler, int slot);
  // Removes a registration a forked child inherited from its parent.
  void remove_inherited();
  // Lets the session whose state is `state` record, through `slot`, up to
  // `op_budget` op calls (0: no limit). After install().
  void open(const c10::DebugInfoBase* state, int slot, std::int64_t op_budget);
  // Stops recording on every thread, at once, if `state` is live; the calls
  // under way have left the profiler when it returns.
  void close(const c10::DebugInfoBase* state);
  // Takes the registration installed as `handle` off the gate: true when the
  // caller is to remove it from libtorch (no later session replaced it).
  bool release(at::CallbackHandle handle);
  // In a forked child: the parent's session does not record here. Returns
  // whether one was live. Its registration is removed when the child starts
  // a session of its own (remove_inherited), not here, where a lock another
  // thread of the parent held may never be released.
  bool close_in_child();

  const c10::DebugInfoBase* live() const { return live_.load(); }
  at::CallbackHandle handle() const { return handle_.load(); }

  // A thread attached to the live session, and one detached from `state`.
  // Inline: a selected region runs both.
  void thread_attached() {
    attached_.fetch_add(1);
    if (!on_.load()) switch_on();  // seq_cst: see switch_off
  }
  void thread_detached(const c10::DebugInfoBase* state) {
    // An attachment to a finished session was not counted by the live one.
    if (state == live_.load()) attached_.fetch_sub(1);
  }

  OpBudget& budget() { return budget_; }
  // Ops that began while collecting and ended after their session finished:
  // their ends are not handed to the profiler.
  std::int64_t late_ends() const { return late_ends_.load(); }

 private:
  template <int Slot>
  static std::unique_ptr<at::ObserverContext> gated_start(const at::RecordFunction& fn);
  template <int Slot>
  static void gated_end(const at::RecordFunction& fn, at::ObserverContext* ctx);
  template <int Slot>
  static bool slot_is_live(std::uint64_t handle);
  template <int... Slots>
  static auto gate_pairs(std::integer_sequence<int, Slots...>);
  static at::RecordFunctionCallback gated_copy(const at::RecordFunctionCallback& cb, int slot);

  void note_refused_outside();
  void switch_off();
  void switch_on();

  std::atomic<const c10::DebugInfoBase*> live_{nullptr};
  std::atomic<at::RecordFunctionCallback::StartCallback> real_start_{nullptr};
  std::atomic<at::RecordFunctionCallback::EndCallback> real_end_{nullptr};
  OpBudget budget_;
  std::atomic<std::int64_t> late_ends_{0};
  // The registration, and one a forked child inherited from its parent.
  std::atomic<at::CallbackHandle> handle_{0};
  std::atomic<at::CallbackHandle> inherited_{0};
  // The switch: see switch_off() for how these are ordered.
  std::atomic<int> attached_{0};  // threads attached to the live session
  std::atomic<std::int64_t> refusals_{0};
  std::atomic<bool> on_{true};
  std::mutex switch_mutex_;
};

// One for the process, at namespace scope: the gated callbacks are plain
// functions (libtorch copies their pointers into each RecordFunction) and
// reach its members as cheaply as globals; hidden, so that they reach them
// without going through the GOT.
__attribute__((visibility("hidden"))) extern CallbackGate g_callback_gate;

}  // namespace regiontrace::torch_profiler
