// What the sink knows about each application thread: the selected regions it
// has open and the collection window it is attached to. The owning thread
// changes its state on region events; the thread that finishes a window reads
// every thread's state, hence the per-thread mutex (uncontended otherwise).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "regiontrace/sdk/events.hpp"
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

struct ThreadState {
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
  // Set once, on the thread itself.
  std::uint64_t os_tid = 0;
  std::uint64_t torch_tid = 0;  // RecordFunction's id; 0 until first attached
  std::string name;
};

class ThreadRegistry {
 public:
  // The calling thread's state, created on first use.
  ThreadState& current();

  template <typename Fn>
  void for_each(Fn&& fn) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& t : threads_) fn(*t);
  }

 private:
  std::mutex mutex_;
  // Never shrinks: a thread's state outlives it, so a window finishing on
  // another thread never reads freed memory. One small record per thread.
  std::vector<std::unique_ptr<ThreadState>> threads_;
};

}  // namespace regiontrace::torch_profiler
