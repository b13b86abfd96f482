#include "session_slots.hpp"

namespace regiontrace::torch_profiler {

// constexpr-constructed members: ready before any constructor runs.
SessionSlots g_session_slots;

int SessionSlots::free_slot() {
  for (int slot = 0; slot < kCountedSlots; ++slot) {
    if (ops_open(slot) <= 0) return slot;
  }
  return kTaggedSlot;
}

}  // namespace regiontrace::torch_profiler
