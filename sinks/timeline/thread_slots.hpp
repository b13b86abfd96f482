// Per-thread recording state, in the SDK's thread table (found by the host's
// thread number with two dependent loads and no lock).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "regiontrace/sdk/thread_table.hpp"
#include "timeline_records.hpp"

namespace regiontrace::timeline {

// A region open on the thread, by depth: what close() writes as a span
// still open at the end. begin_ns 0: nothing open at that depth.
struct OpenRegion {
  std::atomic<std::int64_t> begin_ns{0};
  std::atomic<std::uint32_t> region{0};
  std::atomic<std::int64_t> step{0};
  // The time the host read it open (the batch's end_ns): at close, only
  // what the stop's hand-over saw counts; an older entry is a flush's,
  // possibly read torn while its thread pushed a frame.
  std::atomic<std::int64_t> seen_ns{0};
};

struct ThreadSlot : sdk::ThreadIdentity {
  static constexpr int kMaxDepth = 256;  // the host's deepest tracked nesting

  // Held while the slot's chunk is written: a thread's spans may be handed
  // over by the stopping thread while the thread itself writes a mark.
  void lock() {
    while (busy.exchange(true, std::memory_order_acquire)) {
    }
  }
  void unlock() { busy.store(false, std::memory_order_release); }
  std::atomic<bool> busy{false};

  // Owned by the thread; changed under the exchange's lock while it is
  // open, and taken by close() under the slot's lock once it is closed.
  Chunk* chunk = nullptr;
  std::uint32_t used = 0;
  std::atomic<std::uint64_t> dropped{0};  // events lost for want of a chunk
  // Some open[] entry was set: finished spans clear theirs (a flush's open
  // spans come again when they end).
  bool has_open = false;  // under the slot's lock
  OpenRegion open[kMaxDepth];
};

struct SlotLock {
  explicit SlotLock(ThreadSlot& s) : slot(s) { slot.lock(); }
  ~SlotLock() { slot.unlock(); }
  SlotLock(const SlotLock&) = delete;
  SlotLock& operator=(const SlotLock&) = delete;
  ThreadSlot& slot;
};

using SlotTable = sdk::ThreadTable<ThreadSlot>;

}  // namespace regiontrace::timeline
