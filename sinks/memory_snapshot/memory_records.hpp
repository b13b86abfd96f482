// What the application threads hand to the writer thread: one record per
// region instance, and snapshot jobs. Plain data; formatting happens on the
// writer thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "cuda_memory.hpp"
#include "live_allocation_table.hpp"
#include "memory_devices.hpp"
#include "process_memory.hpp"
#include "thread_accounting.hpp"

namespace regiontrace::memory {

struct CudaFigures {
  int device = 0;  // memory_devices index
  cuda::AllocatorStats stats;
};

struct RegionRecord {
  ClosedRegion figures;
  std::uint64_t thread_id = 0;
  int depth = 0;
  std::int64_t end_ns = 0;
  bool unwinding = false;
  bool has_resident = false;
  ResidentMemory resident;
  // Bytes the path still holds at this exit: tracked allocations still
  // alive, or (without tracking) the running sum of its exclusive net.
  std::int64_t held_bytes = 0;
  std::vector<CudaFigures> cuda;  // empty on CPU-only builds
};

struct TrackingStats {
  bool enabled = false;
  std::int64_t tracked = 0;
  std::int64_t max_tracked = 0;
  std::int64_t overflow_count = 0;
  std::int64_t overflow_bytes = 0;
  std::int64_t untracked_frees = 0;
};

struct SnapshotJob {
  int sequence = 0;
  std::string trigger;  // exit | steps | exception | oom | request
  std::string reason;
  std::string path;  // regions open on the thread that triggered it
  std::int64_t step = kNoStep;
  std::int64_t time_ns = 0;
  std::uint64_t thread_id = 0;
  ResidentMemory resident;
  std::uint32_t devices = 0;
  std::int64_t allocated[kMaxDevices] = {};
  TrackingStats tracking;
  std::vector<LiveAllocation> live;  // empty without tracking
  std::string cuda_pickle;           // CUDA builds with a device
  std::string cuda_error;
};

using WriterItem = std::variant<RegionRecord, std::unique_ptr<SnapshotJob>>;

}  // namespace regiontrace::memory
