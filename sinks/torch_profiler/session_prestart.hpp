// A profiler session started one step before the window that uses it.
//
// Starting libtorch's profiler takes milliseconds (Kineto's prepare and
// start, a thread). Started inside the first step of a window, that time is
// the step's in every sink's report, and the torch trace shows a step
// without ops for it. When the step schedule says the next step collects
// and no window is live, the sink starts the session now, off the
// application's thread; the next step only attaches to it. Until a thread
// attaches, the session records nothing (ProfilerSession's gate).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "profiler_session.hpp"

namespace regiontrace::torch_profiler {

class SessionPrestart {
 public:
  using Post = std::function<void(std::function<void()>)>;  // runs a job off this thread

  SessionPrestart(const ProfilerOptions& options, std::int64_t op_budget);
  ~SessionPrestart();
  SessionPrestart(const SessionPrestart&) = delete;
  SessionPrestart& operator=(const SessionPrestart&) = delete;

  // Starts a session through `post`, unless one is started or starting.
  void begin(const Post& post);
  // The session started ahead (waiting while it starts), else one started
  // here and now. Throws std::runtime_error as ProfilerSession's
  // constructor does, also for a start that failed ahead.
  std::unique_ptr<ProfilerSession> take();
  // Stops a session started ahead that no window took; waits for one
  // starting. Never throws.
  void discard();

 private:
  ProfilerOptions options_;
  std::int64_t op_budget_;
  std::mutex mutex_;
  std::condition_variable done_;
  bool starting_ = false;
  std::unique_ptr<ProfilerSession> ready_;
  std::string error_;  // the start ahead failed
};

}  // namespace regiontrace::torch_profiler
