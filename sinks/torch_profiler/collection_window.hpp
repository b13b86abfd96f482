// One collection window: a profiler session from its start to the trace file
// it becomes (the whole run, a run of selected steps, or one schedule cycle),
// the steps it covered and the threads that collected in it. Region spans and
// markers wait in each thread's own buffer (thread_states.hpp) until the
// window finishes.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <vector>

#include "profiler_session.hpp"
#include "step_schedule.hpp"
#include "trace_model.hpp"

namespace regiontrace::torch_profiler {

struct ThreadState;

class CollectionWindow {
 public:
  // `session`: started, nothing attached yet. `started_ns`: the
  // steady-clock time of the event that opened it.
  CollectionWindow(std::unique_ptr<ProfilerSession> session, StepDecision gate, bool has_step,
                   std::int64_t step, std::int64_t started_ns);

  ProfilerSession& session() { return *session_; }
  StepPhase phase() const { return gate_.phase; }
  std::int64_t cycle() const { return gate_.cycle; }

  // Steady-clock (RegionEvent) nanoseconds to the profiler's epoch clock.
  std::int64_t to_epoch(std::int64_t steady_ns) const { return steady_ns + clock_offset_; }
  std::int64_t realtime_offset_ns() const { return clock_offset_; }
  std::int64_t started_ns() const { return started_ns_; }

  // Threads attached to (collecting for) this window, as the sink sees them:
  // counted where a thread attaches and where its last selected region
  // closes, so that the end of the last one is known without a scan.
  void thread_attached() { attached_.fetch_add(1, std::memory_order_relaxed); }
  // Returns true when it was the last attached thread.
  bool thread_detached() { return attached_.fetch_sub(1, std::memory_order_acq_rel) == 1; }
  int threads_attached() const { return attached_.load(std::memory_order_acquire); }

  // Ignored once the window is finished.
  void note_step(std::int64_t step);
  void add_participant(ThreadState* thread);  // a thread that collected in this window
  void add_step(const StepSpan& step);        // steady-clock times

  struct Records {
    std::vector<ThreadState*> participants;
    bool has_steps = false;
    std::int64_t first_step = 0;
    std::int64_t last_step = 0;
    std::vector<StepSpan> steps;
  };
  // Marks the window finished and hands over what it knows.
  Records take_records();

 private:
  std::unique_ptr<ProfilerSession> session_;
  StepDecision gate_;
  std::int64_t clock_offset_ = 0;
  std::int64_t started_ns_ = 0;
  std::atomic<int> attached_{0};
  std::mutex mutex_;
  bool finished_ = false;
  Records records_;
  std::set<ThreadState*> participants_;
};

}  // namespace regiontrace::torch_profiler
