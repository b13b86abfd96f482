#include "collection_window.hpp"

#include <algorithm>
#include <utility>

#include "regiontrace/sdk/clock_sync.hpp"

namespace regiontrace::torch_profiler {
namespace {

// CLOCK_REALTIME minus CLOCK_MONOTONIC, read between two monotonic reads.
std::int64_t realtime_minus_monotonic() {
  using sdk::clock_sync::read_clock;
  const std::int64_t m0 = read_clock(CLOCK_MONOTONIC);
  const std::int64_t r = read_clock(CLOCK_REALTIME);
  const std::int64_t m1 = read_clock(CLOCK_MONOTONIC);
  return r - (m0 + (m1 - m0) / 2);
}

}  // namespace

CollectionWindow::CollectionWindow(std::unique_ptr<ProfilerSession> session, StepDecision gate,
                                   bool has_step, std::int64_t step, std::int64_t started_ns)
    : session_(std::move(session)),
      gate_(gate),
      clock_offset_(realtime_minus_monotonic()),
      started_ns_(started_ns) {
  if (has_step) note_step(step);
}

void CollectionWindow::note_step(std::int64_t step) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (finished_) return;
  if (!records_.has_steps) {
    records_.has_steps = true;
    records_.first_step = records_.last_step = step;
  } else {
    records_.first_step = std::min(records_.first_step, step);
    records_.last_step = std::max(records_.last_step, step);
  }
}

void CollectionWindow::add_participant(ThreadState* thread) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!finished_ && participants_.insert(thread).second) records_.participants.push_back(thread);
}

void CollectionWindow::add_step(const StepSpan& step) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!finished_) records_.steps.push_back(step);
}

CollectionWindow::Records CollectionWindow::take_records() {
  std::lock_guard<std::mutex> lock(mutex_);
  finished_ = true;
  return std::move(records_);
}

}  // namespace regiontrace::torch_profiler
