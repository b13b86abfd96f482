#include "thread_stats.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

namespace regiontrace::region_stats {
namespace {

using Counter = std::atomic<std::uint64_t>;
using Value = std::atomic<std::int64_t>;

// One writer: a load and a store, no locked instruction.
inline void bump(Counter& c, std::uint64_t by = 1) {
  c.store(c.load(std::memory_order_relaxed) + by, std::memory_order_relaxed);
}
inline void add(Value& v, std::int64_t by) {
  v.store(v.load(std::memory_order_relaxed) + by, std::memory_order_relaxed);
}

inline std::uint64_t load8(const char* p) {
  std::uint64_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline std::uint32_t load4(const char* p) {
  std::uint32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// std::string == std::string_view, without a memcmp call: the region
// begin path makes no call, so it saves no registers. Overlapping 8-byte
// loads cover any length from 8 on.
inline bool same_path(const std::string& a, std::string_view b) {
  const std::size_t n = a.size();
  if (n != b.size()) return false;
  const char* x = a.data();
  const char* y = b.data();
  if (n >= 8) {
    for (std::size_t i = 0; i + 8 < n; i += 8) {
      if (load8(x + i) != load8(y + i)) return false;
    }
    return load8(x + n - 8) == load8(y + n - 8);
  }
  if (n >= 4) return load4(x) == load4(y) && load4(x + n - 4) == load4(y + n - 4);
  for (std::size_t i = 0; i < n; ++i) {
    if (x[i] != y[i]) return false;
  }
  return true;
}

struct LiveTotals {
  Counter count{0};
  Value total_ns{0};
  Value self_ns{0};
  Value min_ns{std::numeric_limits<std::int64_t>::max()};
  Value max_ns{0};

  void add_sample(std::int64_t d, std::int64_t self) {
    bump(count);
    add(total_ns, d);
    add(self_ns, self);
    if (d < min_ns.load(std::memory_order_relaxed)) min_ns.store(d, std::memory_order_relaxed);
    if (d > max_ns.load(std::memory_order_relaxed)) max_ns.store(d, std::memory_order_relaxed);
  }
  RegionTotals read() const {
    RegionTotals t;
    t.count = count.load(std::memory_order_relaxed);
    t.total_ns = total_ns.load(std::memory_order_relaxed);
    t.self_ns = self_ns.load(std::memory_order_relaxed);
    t.min_ns = min_ns.load(std::memory_order_relaxed);
    t.max_ns = max_ns.load(std::memory_order_relaxed);
    return t;
  }
  void reset() {
    count.store(0, std::memory_order_relaxed);
    total_ns.store(0, std::memory_order_relaxed);
    self_ns.store(0, std::memory_order_relaxed);
    min_ns.store(std::numeric_limits<std::int64_t>::max(), std::memory_order_relaxed);
    max_ns.store(0, std::memory_order_relaxed);
  }
};

}  // namespace

struct ThreadStats::Node {
  Node(const RegionEvent& e, std::size_t bounds)
      : id(e.id), name(e.name), path(e.path), depth(e.depth), bound_counts(bounds + 1) {}
  const RegionId id;
  const std::string name;
  const std::string path;
  const int depth;
  std::vector<Node*> children;  // appended under the lock
  Node* last_child = nullptr;   // owner only: the child begin() found last
  LiveTotals totals;
  LiveHistogram histogram;
  std::vector<Counter> bound_counts;
  // The step being accumulated; earlier ones move to `past_steps` (locked).
  std::atomic<std::int64_t> step{kNoStep};
  LiveTotals step_totals;
  std::deque<StepTotals> past_steps;
};

ThreadStats::ThreadStats(std::uint64_t thread_id, std::vector<std::int64_t> bounds_ns,
                         std::size_t max_steps)
    : thread_id_(thread_id), bounds_ns_(std::move(bounds_ns)), max_steps_(max_steps) {
  stack_.resize(64);
}

ThreadStats::~ThreadStats() = default;

// Out of line: begin() answers from its hint most of the time, and stays
// free of this function's register saves.
__attribute__((noinline)) ThreadStats::Node* ThreadStats::child(Node* parent,
                                                                const RegionEvent& e) {
  std::vector<Node*>& list = parent != nullptr ? parent->children : roots_;
  // Compared by path too: regions the sink does not select sit in the path
  // but not on this stack, and `a/x/c` must not count as `a/y/c`.
  for (Node* n : list) {
    if (n->id == e.id && same_path(n->path, e.path)) return n;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  nodes_.push_back(std::make_unique<Node>(e, bounds_ns_.size()));
  list.push_back(nodes_.back().get());
  return list.back();
}

void ThreadStats::begin(const RegionEvent& e) {
  Node* parent = depth_ == 0 ? nullptr : stack_[depth_ - 1].node;
  // A loop runs the same child of a parent again and again: the one found
  // last is tried first (a list holds a path once, so it is the one the
  // search would find).
  Node* n = parent != nullptr ? parent->last_child : last_root_;
  if (n == nullptr || n->id != e.id || !same_path(n->path, e.path) || depth_ == stack_.size()) {
    begin_slow(parent, e);
    return;
  }
  stack_[depth_++] = {n, 0};
}

__attribute__((noinline)) void ThreadStats::begin_slow(Node* parent, const RegionEvent& e) {
  Node* n = child(parent, e);
  (parent != nullptr ? parent->last_child : last_root_) = n;
  if (depth_ == stack_.size()) stack_.resize(stack_.size() * 2);
  stack_[depth_++] = {n, 0};
}

// Everything end() records, for the cases its fast path leaves to it: a
// new histogram chunk, a new step.
__attribute__((noinline)) void ThreadStats::record(Node& n, std::int64_t d, std::int64_t self,
                                                   std::int64_t step) {
  n.totals.add_sample(d, self);
  n.histogram.record(d);
  std::size_t b = 0;
  while (b < bounds_ns_.size() && d > bounds_ns_[b]) ++b;
  bump(n.bound_counts[b]);
  if (max_steps_ == 0 || step == kNoStep) return;
  if (n.step.load(std::memory_order_relaxed) != step) {
    close_step(n);
    n.step.store(step, std::memory_order_relaxed);
  }
  n.step_totals.add_sample(d, self);
}

__attribute__((noinline)) void ThreadStats::close_step(Node& n) {
  std::lock_guard<std::mutex> lock(mutex_);
  const RegionTotals t = n.step_totals.read();
  if (t.count != 0) {
    n.past_steps.push_back({n.step.load(std::memory_order_relaxed), t});
    // The step about to start is the max_steps-th.
    while (n.past_steps.size() + 1 > max_steps_) n.past_steps.pop_front();
  }
  n.step_totals.reset();
}

void ThreadStats::end(const RegionEvent& e) {
  if (depth_ == 0) return;
  const Frame f = stack_[--depth_];
  if (f.node->id != e.id || e.time_ns == 0 || e.begin_time_ns == 0) return;
  const std::int64_t d = std::max<std::int64_t>(0, e.time_ns - e.begin_time_ns);
  if (depth_ != 0) stack_[depth_ - 1].child_ns += d;
  const std::int64_t self = std::max<std::int64_t>(0, d - f.child_ns);
  Node& n = *f.node;
  // What record() does, done here while it needs no call (the register
  // saves and the call cost as much as the recording). Whether it does is
  // decided before anything is written, so nothing is counted twice.
  Counter* bucket = n.histogram.counter(LogBuckets::index_of(d));
  const bool by_step = max_steps_ != 0 && e.step != kNoStep;
  if (bucket == nullptr || (by_step && n.step.load(std::memory_order_relaxed) != e.step)) {
    record(n, d, self, e.step);
    return;
  }
  const std::int64_t* bounds = bounds_ns_.data();
  const std::size_t bound_count = bounds_ns_.size();
  std::size_t b = 0;
  while (b < bound_count && d > bounds[b]) ++b;
  n.totals.add_sample(d, self);
  bump(*bucket);
  bump(n.bound_counts[b]);
  if (by_step) n.step_totals.add_sample(d, self);
}

std::vector<PathRecord> ThreadStats::snapshot() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<PathRecord> out;
  out.reserve(nodes_.size());
  for (const auto& node : nodes_) {
    const Node& n = *node;
    PathRecord r;
    r.thread_id = thread_id_;
    r.name = n.name;
    r.path = n.path;
    r.depth = n.depth;
    r.totals = n.totals.read();
    n.histogram.add_to(r.histogram);
    r.bound_counts.reserve(n.bound_counts.size());
    for (const Counter& c : n.bound_counts)
      r.bound_counts.push_back(c.load(std::memory_order_relaxed));
    r.steps.assign(n.past_steps.begin(), n.past_steps.end());
    const RegionTotals current = n.step_totals.read();
    if (current.count != 0) r.steps.push_back({n.step.load(std::memory_order_relaxed), current});
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace regiontrace::region_stats
