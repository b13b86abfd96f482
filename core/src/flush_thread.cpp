#include "flush_thread.hpp"

#include <pthread.h>
#include <signal.h>

#include <new>
#include <utility>

namespace regiontrace::detail {

void FlushThread::start(std::chrono::nanoseconds interval, std::function<void()> tick) {
  stop();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = false;
    tick_ = std::move(tick);
  }
  // Created with every signal blocked, so none is ever delivered to it.
  sigset_t all;
  sigset_t previous;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &previous);
  thread_ = std::thread([this, interval] { run(interval); });
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
}

void FlushThread::run(std::chrono::nanoseconds interval) {
  pthread_setname_np(pthread_self(), "rt-flush");
  std::unique_lock<std::mutex> lock(mutex_);
  // Ticks at fixed times from the start, not `interval` after each tick
  // ended: a slow flush does not stretch the time between two.
  auto next = std::chrono::steady_clock::now() + interval;
  while (!wake_.wait_until(lock, next, [this] { return stopping_; })) {
    lock.unlock();
    tick_();
    lock.lock();
    const auto now = std::chrono::steady_clock::now();
    next += interval;
    if (next < now) next = now + interval;  // fell behind: no burst of ticks
  }
}

void FlushThread::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  tick_ = nullptr;
}

void FlushThread::forget_after_fork() {
  new (&mutex_) std::mutex();
  new (&wake_) std::condition_variable();
  // The std::thread names a thread of the parent: detaching it here would
  // release nothing of the child's, and joining it would wait forever.
  new (&thread_) std::thread();
  stopping_ = false;
}

}  // namespace regiontrace::detail
