// How many op calls a profiler session records before it stops for good, so
// that one collection window writes at most max_events. The sink's own
// events (region spans, markers) are charged against it too.
#pragma once

#include <atomic>
#include <cstdint>

#include "regiontrace/sdk/clock.hpp"

namespace regiontrace::torch_profiler {

class OpBudget {
 public:
  // `ops`: 0 for no limit. While no session is live.
  void reset(std::int64_t ops) {
    limited_.store(ops > 0);
    left_.store(ops);
    refused_.store(0);
    exhausted_at_ns_.store(0);
  }

  // One op call about to be recorded: false when the budget refuses it.
  bool take_op() {
    if (!limited_.load(std::memory_order_relaxed)) return true;
    if (left_.fetch_sub(1, std::memory_order_relaxed) > 0) return true;
    if (refused_.fetch_add(1, std::memory_order_relaxed) == 0) note_exhausted();
    return false;
  }

  void charge(std::int64_t events) {
    if (!limited_.load(std::memory_order_relaxed)) return;
    if (left_.fetch_sub(events, std::memory_order_relaxed) - events <= 0) note_exhausted();
  }

  bool exhausted() const {
    return limited_.load(std::memory_order_relaxed) && left_.load(std::memory_order_relaxed) <= 0;
  }
  std::int64_t refused() const { return refused_.load(); }
  // When it ran out, on the clock of region events; 0 while it has not:
  // the moment collection stopped, which the trace's markers show.
  std::int64_t exhausted_at_ns() const { return exhausted_at_ns_.load(); }

 private:
  void note_exhausted() {
    std::int64_t none = 0;
    if (exhausted_at_ns_.load(std::memory_order_relaxed) == 0) {
      exhausted_at_ns_.compare_exchange_strong(none, sdk::clock::monotonic_ns());
    }
  }

  std::atomic<bool> limited_{false};
  std::atomic<std::int64_t> left_{0};
  std::atomic<std::int64_t> refused_{0};
  std::atomic<std::int64_t> exhausted_at_ns_{0};
};

}  // namespace regiontrace::torch_profiler
