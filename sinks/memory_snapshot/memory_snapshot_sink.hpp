// The `memory_snapshot` sink: which region allocated what, and what is still
// alive.
//
// Per selected region instance: libtorch-allocated bytes at entry, at exit
// and the peak inside (nested regions have their own peaks), per device, plus
// the process's resident set and high-water mark, as one JSONL record. With
// track_allocations, every live allocation is kept (bounded) with the region
// path and step that made it. Snapshots on triggers (region exit, every N
// steps, a region left by an exception or after an OOM, regiontrace::snapshot())
// write the live allocations grouped by region (CUDA builds: also the caching
// allocator's pickled snapshot). At shutdown: a summary with leak suspects.
//
// Events: allocation_reporter.hpp (how libtorch's allocation events arrive,
// and how the sink shares the profiler's slot). Outputs: docs/memory.md.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "allocation_reporter.hpp"
#include "live_allocation_table.hpp"
#include "memory_counters.hpp"
#include "memory_settings.hpp"
#include "memory_writer.hpp"
#include "process_memory.hpp"
#include "region_paths.hpp"
#include "regiontrace/plugin.hpp"
#include "thread_accounting.hpp"
#include "torch_log_quiet.hpp"

namespace regiontrace::memory {

class MemorySnapshotSink final : public Sink, public AllocationListener {
 public:
  static SinkSchema schema() { return MemorySettings::schema(); }
  explicit MemorySnapshotSink(const SinkContext& ctx);

  std::uint32_t interests() const override;
  // Application threads, concurrently. Begin/end: the figures and the
  // record are taken here (two atomic reads per device, an RSS read); the
  // formatting and writing happen on the writer thread.
  void on_region_begin(const RegionEvent& e) override;
  void on_region_end(const RegionEvent& e) override;
  void on_step(const StepEvent& e) override;
  void on_snapshot_request(const SnapshotRequest& e) override;
  void flush() override;
  void close() override;

  // AllocationListener: any thread, inside libtorch's allocator.
  void on_allocation(ThreadAccounting* owner, std::uintptr_t address, std::int64_t bytes,
                     std::int64_t device_total, int device) override;
  void on_out_of_memory(int device, std::int64_t bytes) override;

 private:
  ThreadAccounting* accounting(std::uint64_t thread_id, bool create);
  ThreadAccounting* bind_thread(std::uint64_t thread_id);
  // on_allocation() with track_allocations.
  void track(ThreadAccounting* owner, std::uintptr_t address, std::int64_t bytes,
             std::int64_t device_total, int device);
  void throw_if_failed();
  void note_stood_aside(const RegionEvent& e);
  void snapshot_after_exit(const RegionEvent& e, ThreadAccounting& acc, std::int64_t step);
  void take_snapshot(std::string trigger, std::string reason, std::string_view path,
                     std::int64_t step, std::int64_t time_ns, std::uint64_t thread_id);
  TrackingStats tracking_stats() const;

  const SinkContext ctx_;
  const MemorySettings settings_;
  const std::uint64_t generation_;
  MemoryCounters counters_;
  // The two large parts come from process-wide pools and go back there once:
  // at close(), or when the constructor throws after taking them (see
  // region_paths.hpp, live_allocation_table.hpp). The host never deletes a
  // sink, and calls racing close() may still reach both: they are never
  // freed, only reused by the next instance.
  struct PooledParts {
    PooledParts(std::size_t max_paths, std::int64_t max_tracked);  // max_tracked < 0: no table
    ~PooledParts() { give_back(); }
    PooledParts(const PooledParts&) = delete;
    PooledParts& operator=(const PooledParts&) = delete;
    void give_back();
    RegionPaths& paths;
    LiveAllocationTable* const table;
    bool given_back = false;
  };
  PooledParts pooled_;
  RegionPaths& paths_;
  LiveAllocationTable* const table_;  // with track_allocations
  TorchLogQuiet log_quiet_;           // from before the reporter listens until close()
  std::atomic<std::int64_t> overflow_count_{0};
  std::atomic<std::int64_t> overflow_bytes_{0};
  std::atomic<std::int64_t> untracked_frees_{0};
  // The host's step, kept from on_step: what a tracked allocation is stamped
  // with, without a call into the host per allocation.
  std::atomic<std::int64_t> step_{kNoStep};
  ProcessMemory process_;
  MemoryWriter writer_;
  bool cuda_ = false;
  bool cuda_history_ = false;

  std::mutex accounts_mutex_;
  std::vector<std::unique_ptr<ThreadAccounting>> accounts_;  // one per thread seen, kept

  std::atomic<int> snapshots_started_{0};
  std::atomic<std::int64_t> snapshots_skipped_{0};
  std::atomic<bool> oom_pending_{false};
  std::atomic<int> oom_device_{0};
  std::atomic<std::int64_t> oom_bytes_{0};
  std::atomic<bool> warned_stood_aside_{false};
  std::mutex stood_aside_mutex_;
  std::string stood_aside_why_;  // for the summary: who held the slot
  std::atomic<bool> warned_max_snapshots_{false};
  std::atomic<bool> closed_{false};
  std::atomic<bool> failure_reported_{false};  // thrown to the host, which logged it
};

}  // namespace regiontrace::memory
