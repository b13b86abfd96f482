// One application thread's region statistics: a tree of the region paths it
// ran, each node with its counts, durations, histogram and per-step rows.
//
// Only the owning thread records (begin/end arrive on the thread that ran the
// region), so the hot path takes no lock: numbers are relaxed atomics written
// by their one writer. The lock is taken by the owner only when a path is
// seen for the first time or a node moves on to a new step, and by readers
// (a Prometheus scrape, shutdown) while they copy the numbers out.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "log_histogram.hpp"
#include "region_totals.hpp"
#include "regiontrace/sdk/events.hpp"
#include "regiontrace/sdk/thread_table.hpp"

namespace regiontrace::region_stats {

struct StepTotals {
  std::int64_t step = kNoStep;
  RegionTotals totals;
};

// What a reader copies out of one node.
struct PathRecord {
  std::uint64_t thread_id = 0;
  std::uint64_t threads = 1;  // threads whose numbers these are (folded ones: many)
  std::string name;
  std::string path;
  int depth = 0;
  RegionTotals totals;
  HistogramCounts histogram;
  std::vector<std::uint64_t> bound_counts;  // per Prometheus bound, last: above all
  std::vector<StepTotals> steps;            // oldest first
};

// An entry of the SDK's thread table (sdk::ThreadIdentity: the thread's
// number, OS id and name).
class ThreadStats : public sdk::ThreadIdentity {
 public:
  // `bounds_ns`: the Prometheus bucket bounds (increasing), counted exactly.
  ThreadStats(std::uint64_t thread_id, std::vector<std::int64_t> bounds_ns, std::size_t max_steps);
  ~ThreadStats();
  ThreadStats(const ThreadStats&) = delete;
  ThreadStats& operator=(const ThreadStats&) = delete;

  // Owner thread only.
  void begin(const RegionEvent& e);
  void end(const RegionEvent& e);

  // Any thread.
  std::vector<PathRecord> snapshot() const;
  std::uint64_t thread_id() const { return thread_id_; }

 private:
  struct Node;
  struct Frame {
    Node* node;
    std::int64_t child_ns;
  };
  Node* child(Node* parent, const RegionEvent& e);
  void record(Node& n, std::int64_t duration_ns, std::int64_t self_ns, std::int64_t step);
  void close_step(Node& n);
  void begin_slow(Node* parent, const RegionEvent& e);

  const std::uint64_t thread_id_;
  const std::vector<std::int64_t> bounds_ns_;
  const std::size_t max_steps_;
  mutable std::mutex mutex_;  // node lists and past steps; see the header comment
  std::deque<std::unique_ptr<Node>> nodes_;
  std::vector<Node*> roots_;
  Node* last_root_ = nullptr;  // owner only: the root begin() found last
  // Owner only: frames [0, depth_); grown by begin_slow(), never shrunk, so
  // that begin() and end() make no call.
  std::vector<Frame> stack_;
  std::size_t depth_ = 0;
};

}  // namespace regiontrace::region_stats
