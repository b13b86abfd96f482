#include "thread_stats_registry.hpp"

#include <unistd.h>

#include <algorithm>
#include <utility>

namespace regiontrace::region_stats {
namespace {

// Registries alive, by serial: an exit hook finds its registry here, or
// learns it is gone (a sink built and destroyed by a test, a thread that
// outlives it). Never destroyed: threads exit after static destructors ran.
struct LiveRegistries {
  std::mutex mutex;
  std::map<std::uint64_t, ThreadRegistry*> by_serial;
  std::uint64_t next = 1;
};
LiveRegistries& live_registries() {
  static LiveRegistries* r = new LiveRegistries();
  return *r;
}

// Tells each registry the calling thread recorded in that it has ended.
// Touched only when a thread is first seen by a registry.
struct ExitHooks {
  pid_t pid = ::getpid();
  std::vector<std::pair<std::uint64_t, std::uint64_t>> entries;  // registry serial, thread
  ~ExitHooks() {
    // A forked child's exiting thread: the parent's registries are not its own.
    if (::getpid() != pid) return;
    LiveRegistries& live = live_registries();
    std::lock_guard<std::mutex> lock(live.mutex);  // the registry stays alive meanwhile
    for (const auto& [serial, thread] : entries) {
      auto it = live.by_serial.find(serial);
      if (it != live.by_serial.end()) it->second->finish(thread);
    }
  }
};
thread_local ExitHooks t_exit_hooks;

std::uint64_t register_registry(ThreadRegistry* r) {
  LiveRegistries& live = live_registries();
  std::lock_guard<std::mutex> lock(live.mutex);
  const std::uint64_t serial = live.next++;
  live.by_serial[serial] = r;
  return serial;
}

}  // namespace

ThreadRegistry::ThreadRegistry(std::vector<std::int64_t> bounds_ns, std::size_t max_steps)
    : bounds_ns_(std::move(bounds_ns)),
      max_steps_(max_steps),
      serial_(register_registry(this)),
      folded_(max_steps) {}

ThreadRegistry::~ThreadRegistry() {
  LiveRegistries& live = live_registries();
  std::lock_guard<std::mutex> lock(live.mutex);
  live.by_serial.erase(serial_);
}

ThreadStats& ThreadRegistry::create(std::uint64_t thread_id) {
  bool hook = false;
  ThreadStats* stats = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stats = table_.find(thread_id);
    if (stats == nullptr) {
      stats =
          table_.create(thread_id, sdk::this_thread_os_tid(), thread_id, bounds_ns_, max_steps_);
      // A thread already finished that records again is inside its own
      // exit (the host ends its open regions after this sink's hook ran):
      // it keeps this small table, without a hook it could not register now.
      hook = ended_.count(thread_id) == 0;
    }
  }
  if (hook) t_exit_hooks.entries.emplace_back(serial_, thread_id);
  return *stats;
}

void ThreadRegistry::finish(std::uint64_t thread_id) {
  std::lock_guard<std::mutex> lock(mutex_);
  const std::unique_ptr<ThreadStats> gone = table_.remove(thread_id);
  if (!gone) return;
  ended_.insert(thread_id);
  std::vector<PathRecord> records = gone->snapshot();
  if (!records.empty()) finished_.push_back(std::move(records));
  while (finished_.size() > kKeptFinished) {
    folded_.fold(finished_.front());
    finished_.pop_front();
  }
}

std::vector<PathRecord> ThreadRegistry::snapshot(std::uint64_t* folded_threads) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (folded_threads != nullptr) *folded_threads = folded_.threads();
  std::vector<PathRecord> out;
  std::vector<ThreadStats*> live = table_.all();
  std::sort(live.begin(), live.end(),
            [](const ThreadStats* a, const ThreadStats* b) { return a->number < b->number; });
  for (const ThreadStats* stats : live) {
    std::vector<PathRecord> part = stats->snapshot();
    for (PathRecord& r : part) out.push_back(std::move(r));
  }
  for (const std::vector<PathRecord>& thread : finished_) {
    out.insert(out.end(), thread.begin(), thread.end());
  }
  folded_.append_to(out);
  return out;
}

std::size_t ThreadRegistry::thread_count() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return table_.size() + finished_.size();
}

std::uint64_t ThreadRegistry::folded_threads() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return folded_.threads();
}

}  // namespace regiontrace::region_stats
