// What the sink knows about each application thread: the selected regions it
// has open and the collection window it is attached to, in the SDK's thread
// table. The owning thread changes its state on region events; the thread
// that finishes a window reads every thread's state, hence the per-thread
// mutex (uncontended otherwise). Entries never go: a thread's state outlives
// it, so a window finishing on another thread never reads freed memory.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "regiontrace/sdk/events.hpp"
#include "regiontrace/sdk/thread_table.hpp"
#include "trace_model.hpp"

namespace regiontrace::torch_profiler {

class CollectionWindow;

struct OpenRegion {
  RegionId id = 0;
  std::int64_t begin_ns = 0;  // steady clock, as in RegionEvent
  std::int64_t step = 0;
  bool has_step = false;
  std::string path;
  int depth = 0;
  CollectionWindow* window = nullptr;  // the window its span goes to; nullptr: none
  bool clipped_begin = false;
};

struct ThreadState : sdk::ThreadIdentity {
  std::mutex mutex;
  std::vector<OpenRegion> frames;           // selected regions open on this thread
  CollectionWindow* window = nullptr;       // attached to (collecting for) this window
  CollectionWindow* last_window = nullptr;  // last one it collected in (participants)
  // Spans and markers (steady-clock times) for `records_window`, taken by
  // the thread that finishes it. Kept here so that recording them takes the
  // lock the region events take anyway.
  CollectionWindow* records_window = nullptr;
  std::vector<RegionSpan> spans;
  std::vector<CollectionMarker> markers;

  // The buffers for `w`; what is left from an earlier, finished window goes.
  ThreadState& records_for(CollectionWindow* w) {
    if (records_window != w) {
      spans.clear();
      markers.clear();
      records_window = w;
    }
    return *this;
  }
  std::uint64_t torch_tid = 0;  // RecordFunction's id; 0 until first attached, on the thread

  // The OS thread id as traces carry it (`tid`).
  std::uint64_t trace_tid() const { return static_cast<std::uint64_t>(os_tid); }
};

using ThreadStates = sdk::ThreadTable<ThreadState>;

// Thread `number`'s state (an event's thread_id, on the calling thread),
// made on first use.
inline ThreadState& state_of(ThreadStates& threads, std::uint64_t number) {
  ThreadState* t = threads.find(number);
  return t != nullptr ? *t : *threads.create(number, sdk::this_thread_os_tid());
}

}  // namespace regiontrace::torch_profiler
