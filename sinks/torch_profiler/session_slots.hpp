// Which pair of gate functions a profiler session's ops go through.
//
// An op that begins in one session and ends in the next must reach neither
// session's end callback: its context points into the events of the first,
// freed by then. libtorch copies the callbacks' function pointers into each
// RecordFunction when it is made, so the gate (callback_gate.hpp) comes as
// kCountedSlots pairs of functions, one pair registered per session: an op
// ends through the pair it began with, and a pair tells its session by its
// slot. A session takes a slot no open op began through (calls_under_way.hpp
// counts them), so a slot names one session for as long as any of its ops
// can end.
//
// With every counted slot held by an op still open (scopes left open across
// four collection windows), a session takes kTaggedSlot, which tells its ops
// by RecordFunction handle instead: libtorch numbers every RecordFunction in
// the order it is made when a callback asks for ids, and the session
// remembers the first number drawn after it went live. Asking for ids costs
// every RecordFunction a locked increment in libtorch (Kineto's own
// callback does not ask), hence the counted slots first.
#pragma once

#include <atomic>
#include <cstdint>

#include "calls_under_way.hpp"

namespace regiontrace::torch_profiler {

constexpr int kTaggedSlot = kCountedSlots;

class SessionSlots {
 public:
  // The slot for a session starting now; while no session is live.
  static int free_slot();

  // The slot of the session going live, and for kTaggedSlot the first
  // RecordFunction handle drawn after it did (its ops have that or higher).
  // Before the gate lets any op see the session.
  void name_live(int slot, std::uint64_t first_handle) {
    live_slot_.store(slot, std::memory_order_relaxed);
    if (slot == kTaggedSlot) first_handle_.store(first_handle, std::memory_order_relaxed);
  }

  // Read by the gate in a call counted by CallUnderWay, after it saw the
  // session live (which orders these loads after name_live's stores).
  int live_slot() const { return live_slot_.load(std::memory_order_relaxed); }
  std::uint64_t first_handle() const { return first_handle_.load(std::memory_order_relaxed); }

 private:
  std::atomic<int> live_slot_{-1};
  std::atomic<std::uint64_t> first_handle_{0};
};

// One for the process, at namespace scope: the gate's functions are plain
// functions (libtorch copies their pointers into each RecordFunction) and
// reach it as cheaply as a global; hidden, so that they reach it without
// going through the GOT.
__attribute__((visibility("hidden"))) extern SessionSlots g_session_slots;

}  // namespace regiontrace::torch_profiler
