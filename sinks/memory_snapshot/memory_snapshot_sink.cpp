#include "memory_snapshot_sink.hpp"

#include <stdexcept>
#include <utility>

#include "cuda_memory.hpp"
#include "regiontrace/sdk/trace_time.hpp"

namespace regiontrace::memory {
namespace {

constexpr std::size_t kMaxPaths = 4096;

std::atomic<std::uint64_t> g_next_generation{0};

// This thread's accounting for the running sink instance. Plain data, so it
// stays readable while other thread_local objects are destroyed at thread
// exit (the host closes regions left open there, after or before ours).
struct Binding {
  std::uint64_t generation;
  ThreadAccounting* accounting;
};
thread_local Binding t_binding{0, nullptr};

// At thread exit, give back what a finished thread's accounting holds,
// unless regions are still open there (their ends may come after this).
struct BindingCleaner {
  ~BindingCleaner() {
    ThreadAccounting* a = t_binding.accounting;
    if (a != nullptr && a->empty()) {
      a->release();
      t_binding = {0, nullptr};
    }
  }
};
thread_local BindingCleaner t_cleaner;

}  // namespace

MemorySnapshotSink::PooledParts::PooledParts(std::size_t max_paths, std::int64_t max_tracked)
    : paths(RegionPaths::acquire(max_paths)),
      table(max_tracked >= 0
                ? &LiveAllocationTable::acquire(static_cast<std::size_t>(max_tracked), max_paths)
                : nullptr) {}

void MemorySnapshotSink::PooledParts::give_back() {
  if (given_back) return;
  given_back = true;
  if (table != nullptr) LiveAllocationTable::recycle(*table);
  RegionPaths::recycle(paths);
}

MemorySnapshotSink::MemorySnapshotSink(const SinkContext& ctx)
    : ctx_(ctx),
      settings_(MemorySettings::from_context(ctx)),
      generation_(++g_next_generation),
      pooled_(kMaxPaths, settings_.track_allocations ? settings_.max_tracked : -1),
      paths_(pooled_.paths),
      table_(pooled_.table),
      writer_(ctx_, settings_, paths_),
      cuda_(cuda::available()) {
  step_.store(ctx.current_step());
  if (cuda_) {
    cuda::attach_oom_observer();
    // Start from the allocator's figures, not from 0, on devices in use.
    for (int i = 0; i < kMaxCudaDevices; ++i) {
      cuda::AllocatorStats stats;
      if (cuda::allocator_stats(i, &stats) && stats.reserved_current > 0) {
        counters_.set(cuda_device(i), stats.allocated_current);
      }
    }
    if (settings_.cuda_record_history) {
      std::string error;
      cuda_history_ = cuda::record_history(true, settings_.cuda_history_entries, &error);
      if (!cuda_history_) ctx_.warn("could not record CUDA allocation history: " + error);
    }
  } else if (settings_.cuda_record_history) {
    ctx_.warn(cuda::compiled_in() ? "cuda_record_history: no CUDA device; ignored"
                                  : "cuda_record_history: this build has no CUDA support; ignored");
  }
  set_listener(this, generation_);
}

std::uint32_t MemorySnapshotSink::interests() const {
  // Timestamps: durations, the trace and snapshot times need them.
  return kInterestRegions | kInterestSteps | kInterestSnapshots | kInterestTimestamps;
}

inline ThreadAccounting* MemorySnapshotSink::accounting(std::uint64_t thread_id, bool create) {
  // One thread-local access per event (a call into the dynamic linker from
  // a plugin); the first event of a thread takes the out-of-line path.
  const Binding b = t_binding;
  if (__builtin_expect(b.generation == generation_ && b.accounting != nullptr, 1)) {
    return b.accounting;
  }
  return create ? bind_thread(thread_id) : nullptr;
}

ThreadAccounting* MemorySnapshotSink::bind_thread(std::uint64_t thread_id) {
  Binding& b = t_binding;
  // The thread's accounting for an earlier, closed instance: the object
  // stays (reporters may still point at it), its per-thread parts (frames,
  // caches, reporter) are this thread's alone and no longer needed.
  if (b.accounting != nullptr && b.generation != generation_ && b.accounting->empty()) {
    b.accounting->release();
  }
  auto owned = std::make_unique<ThreadAccounting>(generation_, thread_id);
  ThreadAccounting* a = owned.get();
  {
    std::lock_guard<std::mutex> lock(accounts_mutex_);
    accounts_.push_back(std::move(owned));
  }
  b = {generation_, a};
  (void)&t_cleaner;  // odr-use: registers the cleaner for this thread
  return a;
}

void MemorySnapshotSink::throw_if_failed() {
  if (__builtin_expect(!writer_.failed(), 1)) return;
  const std::string failure = writer_.failure();
  // The host logs this once, switches the sink off and closes it.
  failure_reported_.store(true);
  throw std::runtime_error(failure);
}

void MemorySnapshotSink::note_stood_aside(const RegionEvent& e) {
  if (warned_stood_aside_.exchange(true)) return;
  const std::string why = slot_holder() +
                          " held libtorch's memory-reporting slot on the thread: allocations "
                          "there went to it while it collected, not to this sink";
  {
    std::lock_guard<std::mutex> lock(stood_aside_mutex_);
    stood_aside_why_ = why;
  }
  ctx_.warn("stood aside in region `" + std::string(e.path) + "` (thread " +
            std::to_string(e.thread_id) + "): " + why +
            ". The affected records say \"stood_aside\": true, the summary says why "
            "(reported once)");
}

void MemorySnapshotSink::on_region_begin(const RegionEvent& e) {
  if (closed_.load(std::memory_order_relaxed)) return;
  throw_if_failed();
  ThreadAccounting* a = accounting(e.thread_id, true);
  const bool ours = claim_slot(*a) == SlotState::kOurs;
  if (!ours) note_stood_aside(e);
  const int path = a->cached_path(e.path, e.name, paths_);
  a->unwind_snapshot_depth = -1;
  a->open(e.id, path, e.step, e.time_ns, counters_, !ours);
}

void MemorySnapshotSink::on_region_end(const RegionEvent& e) {
  if (closed_.load(std::memory_order_relaxed)) return;
  throw_if_failed();
  ThreadAccounting* a = accounting(e.thread_id, false);
  if (a == nullptr) return;
  // Built where the queue keeps it: one move into the queue, not two.
  WriterItem item(std::in_place_type<RegionRecord>);
  RegionRecord& r = *std::get_if<RegionRecord>(&item);
  const bool ours = slot_is_ours(*a);
  if (!ours) note_stood_aside(e);
  if (!a->close(e.id, counters_, !ours, &r.figures)) return;
  r.thread_id = e.thread_id;
  r.depth = e.depth;
  r.end_ns = e.time_ns;
  r.unwinding = e.unwinding;
  r.held_bytes = table_ ? table_->live_bytes(r.figures.path)
                        : paths_.add_net(r.figures.path, r.figures.exclusive_net);
  if (settings_.rss) {
    r.resident = process_.sample_at(e.time_ns, sdk::units::us_to_ns(settings_.rss_interval_us));
    r.has_resident = true;
  }
  if (cuda_ && settings_.cuda_allocator_stats) {
    r.figures.devices.for_each([&](const DeviceFigures& d) {
      if (!is_cuda(d.device)) return;
      CudaFigures c;
      c.device = d.device;
      if (cuda::allocator_stats(cuda_index(d.device), &c.stats)) r.cuda.push_back(c);
    });
  }
  const std::int64_t step = r.figures.step;
  writer_.push(std::move(item));

  // Most exits trigger nothing: the strings are built out of line, only
  // when one might.
  if (__builtin_expect(e.unwinding || a->unwind_snapshot_depth >= 0 ||
                           !settings_.snapshot_on_exit.empty() ||
                           oom_pending_.load(std::memory_order_relaxed),
                       0)) {
    snapshot_after_exit(e, *a, step);
  }
}

void MemorySnapshotSink::snapshot_after_exit(const RegionEvent& e, ThreadAccounting& acc,
                                             std::int64_t step) {
  ThreadAccounting* a = &acc;
  // At most one snapshot per region end: an OOM first, then an exception,
  // then the exit trigger.
  std::string trigger;
  std::string reason;
  if (settings_.snapshot_on_exception && oom_pending_.load(std::memory_order_relaxed) &&
      oom_pending_.exchange(false)) {
    trigger = "oom";
    reason = "out of memory: " + std::to_string(oom_bytes_.load()) + " bytes on " +
             device_name(oom_device_.load());
    if (e.unwinding) a->unwind_snapshot_depth = e.depth;
  } else if (e.unwinding) {
    // One exception unwinding through nested regions: one snapshot, at the
    // innermost.
    const bool same_exception = a->unwind_snapshot_depth >= 0 && e.depth < a->unwind_snapshot_depth;
    if (settings_.snapshot_on_exception && !same_exception) {
      trigger = "exception";
      reason = "region `" + std::string(e.path) + "` left by an exception";
    }
    a->unwind_snapshot_depth = e.depth;
  } else if (!settings_.snapshot_on_exit.empty() && settings_.snapshot_on_exit_of(e.name)) {
    trigger = "exit";
    reason = "exit of `" + std::string(e.path) + "`";
  }
  if (!e.unwinding) a->unwind_snapshot_depth = -1;
  if (!trigger.empty()) {
    take_snapshot(std::move(trigger), std::move(reason), e.path, step, e.time_ns, e.thread_id);
  }
}

void MemorySnapshotSink::on_step(const StepEvent& e) {
  step_.store(e.step, std::memory_order_relaxed);
  if (closed_.load(std::memory_order_relaxed)) return;
  const std::int64_t n = settings_.snapshot_every_steps;
  if (n <= 0 || e.step == kNoStep || e.step % n != 0) return;
  take_snapshot("steps",
                "step " + std::to_string(e.step) + " (every " + std::to_string(n) + " steps)", {},
                e.step, e.time_ns, e.thread_id);
}

void MemorySnapshotSink::on_snapshot_request(const SnapshotRequest& e) {
  if (closed_.load(std::memory_order_relaxed)) return;
  take_snapshot("request", std::string(e.reason), e.path, e.step, e.time_ns, e.thread_id);
}

void MemorySnapshotSink::take_snapshot(std::string trigger, std::string reason,
                                       std::string_view path, std::int64_t step,
                                       std::int64_t time_ns, std::uint64_t thread_id) {
  const int index = snapshots_started_.fetch_add(1);
  if (index >= settings_.max_snapshots) {
    snapshots_skipped_.fetch_add(1);
    if (!warned_max_snapshots_.exchange(true)) {
      ctx_.warn("max_snapshots (" + std::to_string(settings_.max_snapshots) +
                ") reached: later snapshots are skipped and counted in the summary");
    }
    return;
  }
  auto job = std::make_unique<SnapshotJob>();
  job->sequence = index + 1;
  job->trigger = std::move(trigger);
  job->reason = std::move(reason);
  job->path = std::string(path);
  job->step = step;
  job->time_ns = time_ns;
  job->thread_id = thread_id;
  job->resident = process_.sample();
  job->devices = counters_.seen();
  for_each_device(job->devices, [&](int d) { job->allocated[d] = counters_.current(d); });
  job->tracking = tracking_stats();
  if (table_) job->live = table_->copy();
  if (cuda_) job->cuda_pickle = cuda::snapshot_pickle(&job->cuda_error);
  writer_.push(std::move(job));
}

TrackingStats MemorySnapshotSink::tracking_stats() const {
  TrackingStats t;
  t.enabled = table_ != nullptr;
  if (table_) {
    t.tracked = static_cast<std::int64_t>(table_->size());
    t.max_tracked = static_cast<std::int64_t>(table_->max_entries());
  }
  t.overflow_count = overflow_count_.load();
  t.overflow_bytes = overflow_bytes_.load();
  t.untracked_frees = untracked_frees_.load();
  return t;
}

void MemorySnapshotSink::on_allocation(ThreadAccounting* owner, std::uintptr_t address,
                                       std::int64_t bytes, std::int64_t device_total, int device) {
  if (bytes == 0) return;
  if (owner != nullptr) owner->note_heard();
  if (table_) {
    track(owner, address, bytes, device_total, device);
    return;
  }
  std::int64_t now = device_total;
  if (device == kCpuDevice) {
    now = counters_.add(kCpuDevice, bytes);
  } else {
    counters_.set(device, now);
  }
  if (bytes > 0 && owner != nullptr) owner->note_peak(device, now);
}

inline void MemorySnapshotSink::track(ThreadAccounting* owner, std::uintptr_t address,
                                      std::int64_t bytes, std::int64_t device_total, int device) {
  // Every tracked event takes the table's lock: the device's figure is
  // counted under it, a plain add instead of a second locked instruction.
  std::int64_t now = device_total;
  const auto count = [&] {
    if (device == kCpuDevice) {
      now = counters_.add_serialised(kCpuDevice, bytes);
    } else {
      counters_.set(device, now);
    }
  };
  if (bytes < 0) {
    if (!table_->erase(address, nullptr, count)) {
      untracked_frees_.fetch_add(1, std::memory_order_relaxed);
    }
    return;
  }
  LiveAllocation a;
  a.address = address;
  a.bytes = bytes;
  a.step = step_.load(std::memory_order_relaxed);
  a.path = owner != nullptr ? owner->current_path.load(std::memory_order_relaxed)
                            : RegionPaths::kOutside;
  a.device = device;
  // The table settles the paths' held bytes itself (kReplaced: the stale
  // entry's path gives its bytes back).
  if (table_->insert(a, nullptr, count) == LiveAllocationTable::InsertResult::kFull) {
    overflow_count_.fetch_add(1, std::memory_order_relaxed);
    overflow_bytes_.fetch_add(bytes, std::memory_order_relaxed);
  }
  if (owner != nullptr) owner->note_peak(device, now);
}

void MemorySnapshotSink::on_out_of_memory(int device, std::int64_t bytes) {
  oom_device_.store(device);
  oom_bytes_.store(bytes);
  oom_pending_.store(true);
}

void MemorySnapshotSink::flush() {
  if (closed_.load()) return;
  writer_.flush();
}

void MemorySnapshotSink::close() {
  if (closed_.exchange(true)) return;
  set_listener(nullptr, 0);
  log_quiet_.restore();
  if (cuda_history_) {
    std::string ignored;
    cuda::record_history(false, settings_.cuda_history_entries, &ignored);
  }
  RunTotals totals;
  totals.rank = ctx_.rank();
  totals.pid = ctx_.pid();
  totals.world_size = ctx_.world_size();
  totals.tracking = tracking_stats();
  totals.snapshots_skipped = snapshots_skipped_.load();
  totals.resident = ProcessMemory::status();
  totals.devices = counters_.seen();
  for_each_device(totals.devices, [&](int d) { totals.allocated[d] = counters_.current(d); });
  totals.paths_overflowed = paths_.overflowed();
  {
    std::lock_guard<std::mutex> lock(stood_aside_mutex_);
    totals.stood_aside_why = stood_aside_why_;
  }
  const MemoryWriter::Closing c = writer_.close(totals);
  const std::string where =
      c.summary_file.empty() ? std::string("summary file not written") : c.summary_file;
  ctx_.info("memory summary (rank " + std::to_string(ctx_.rank()) + ", " + where + "):\n" +
            c.table);
  if (!c.suspects.empty()) {
    std::string list;
    for (const std::string& s : c.suspects) list += (list.empty() ? "" : ", ") + s;
    ctx_.warn("leak suspects (held bytes grow across steps): " + list + "; see " + where);
  }
  if (writer_.dropped() > 0) {
    ctx_.warn(std::to_string(writer_.dropped()) +
              " region records were dropped because the writer fell behind (queue_capacity)");
  }
  const std::string failure = writer_.failure();
  if (!failure.empty() && !failure_reported_.load()) ctx_.error(failure);
  // This instance is never deleted: it keeps only small parts. The pooled
  // ones are never freed, so a call that raced the checks above still finds
  // valid memory (and at worst counts its event into the next instance).
  pooled_.give_back();
}

}  // namespace regiontrace::memory

REGIONTRACE_SINK_PLUGIN(regiontrace::memory::MemorySnapshotSink, "memory_snapshot")
