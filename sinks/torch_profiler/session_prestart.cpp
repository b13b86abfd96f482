#include "session_prestart.hpp"

#include <exception>
#include <stdexcept>
#include <utility>

#include "collected_profile.hpp"

namespace regiontrace::torch_profiler {

SessionPrestart::SessionPrestart(const ProfilerOptions& options, std::int64_t op_budget)
    : options_(options), op_budget_(op_budget) {}

SessionPrestart::~SessionPrestart() {
  discard();
}

void SessionPrestart::begin(const Post& post) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (starting_ || ready_ != nullptr || !error_.empty()) return;
    starting_ = true;
  }
  post([this] {
    std::unique_ptr<ProfilerSession> session;
    std::string error;
    try {
      session = std::make_unique<ProfilerSession>(options_, op_budget_);
    } catch (const std::exception& e) {
      error = e.what();
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ready_ = std::move(session);
      error_ = std::move(error);
      starting_ = false;
    }
    done_.notify_all();
  });
}

std::unique_ptr<ProfilerSession> SessionPrestart::take() {
  {
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [this] { return !starting_; });
    if (ready_ != nullptr) return std::move(ready_);
    if (!error_.empty()) {
      const std::string error = std::move(error_);
      error_.clear();
      throw std::runtime_error(error);
    }
  }
  return std::make_unique<ProfilerSession>(options_, op_budget_);
}

void SessionPrestart::discard() {
  std::unique_ptr<ProfilerSession> unused;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [this] { return !starting_; });
    unused = std::move(ready_);
    error_.clear();
  }
  if (unused == nullptr) return;
  try {
    unused->stop_recording();
    (void)unused->collect();
  } catch (const std::exception&) {
    // Nothing was recorded in it; the next session says what libtorch says.
  }
}

}  // namespace regiontrace::torch_profiler
