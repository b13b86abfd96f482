// One run of libtorch's profiler (enableProfiler .. disableProfiler), with
// collection switched on and off per thread.
//
// libtorch's profiler is thread-local: enableProfiler() puts its state in the
// calling thread's c10::ThreadLocalDebugInfo and its RecordFunction callback
// in that thread's callback list; only that thread, and threads that inherit
// its thread-local state (autograd engine workers, at::launch tasks, JIT
// forks), record ops. This class starts the profiler on a thread of its own,
// registers a gated copy of the profiler's callback for every thread
// (callback_gate.hpp), and attaches an application thread (pushes the
// session's state onto its debug info) while it is inside a selected
// region; detaching pops it. The gate
// records an op only on a thread that carries the live state. That is
// collection switched on and off in a fraction of a microsecond, per thread,
// without restarting the profiler per region and without
// toggleCollectionDynamic, which is process-wide and synchronises the device
// at each call (CUDA activity: device_windows.hpp).
//
// While a session runs, every op on every thread passes the gate (a
// RecordFunction and a thread-local lookup, and its inputs are packed when
// shapes are recorded); threads that are not attached record nothing. A
// finished session, or one that used up its op budget, stops recording on
// every thread at once, also on threads still attached that detach later.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace regiontrace::torch_profiler {

struct ProfilerOptions {
  bool record_shapes = false;
  bool profile_memory = false;
  bool with_stack = false;
  bool with_flops = false;
  bool cpu = true;
  bool cuda = false;
};

struct CollectedProfile;  // collected_profile.hpp
struct CollectedProfileDeleter {
  void operator()(CollectedProfile* p) const;
};
using CollectedProfilePtr = std::unique_ptr<CollectedProfile, CollectedProfileDeleter>;

enum class AttachResult {
  kAttached,           // this thread records from now on
  kAlreadyCollecting,  // attached before, or it inherited the state of a collecting thread
  kForeignProfiler,    // the application runs its own torch profiler here: stand aside
  kFinished,           // the session was finished; nothing was changed
};

class ProfilerSession {
 public:
  // Starts the profiler. `op_budget`: how many op calls it records before it
  // stops for good (0: no limit). Throws std::runtime_error when libtorch
  // refuses (for example, a process-wide profiler is already running).
  ProfilerSession(const ProfilerOptions& options, std::int64_t op_budget);
  ~ProfilerSession();
  ProfilerSession(const ProfilerSession&) = delete;
  ProfilerSession& operator=(const ProfilerSession&) = delete;

  // On the calling thread. Not concurrently with finish().
  AttachResult attach_current_thread();
  // Undoes the calling thread's attachment, to this or any earlier session.
  // Returns false when the thread was not attached.
  static bool detach_current_thread();
  // RecordFunction's id of the calling thread: the thread id in the events.
  static std::uint64_t current_torch_thread_id();

  bool live() const;
  bool budget_exhausted() const;
  std::int64_t ops_refused() const;  // op calls not recorded because of the budget
  // Counts `events` the sink records itself (region spans, markers) against
  // the budget, so that what one window writes stays within max_events.
  static void charge(std::int64_t events);
  // Ops (of any session of this process) that began while collecting and
  // ended after their session finished: their ends are not recorded.
  static std::int64_t late_op_ends();
  // When the budget ran out (CLOCK_MONOTONIC ns, the clock of region
  // events); 0 while it has not.
  std::int64_t exhausted_at_ns() const;

  // Stops recording on every thread, at once and cheaply: ops that begin
  // later are not recorded, and the calls under way have left the profiler
  // when it returns. On any thread, once; collect() must follow.
  void stop_recording();
  // Stops libtorch's profiler and returns what was collected: the costly
  // part (tens of milliseconds), which the sink runs off the application's
  // threads so that no region or step of the program absorbs it. Once,
  // after stop_recording(), on any thread. A new session starts only after
  // the previous one was collected (one profiler per process): its
  // constructor waits. Throws std::runtime_error when libtorch fails.
  CollectedProfilePtr collect();

  // Runs a profiler once, on a thread of its own, and throws the result
  // away: libtorch builds the function-local statics a session uses on first
  // use, and one built after the host registered its exit handler is
  // destroyed before that handler closes the sink. The sink calls this from
  // its constructor; the host registers its handler again after building
  // the sinks. Never throws.
  static void prime(const ProfilerOptions& options);

  static std::string torch_version();
  static bool cuda_available();

 public:
  struct Impl;  // opaque; public so the thread-local attachment can point at it

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace regiontrace::torch_profiler
