// The CUDA part of the memory sink (needs libtorch built with CUDA, 2.x).
// Compiled only with REGIONTRACE_MEMORY_SNAPSHOT_CUDA; cannot be built on a
// machine without CUDA-enabled libtorch: checked on a GPU host.
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <torch/csrc/cuda/memory_snapshot.h>

#include <exception>
#include <mutex>

#include "allocation_reporter.hpp"
#include "cuda_memory.hpp"
#include "memory_devices.hpp"

namespace regiontrace::memory::cuda {
namespace {

namespace alloc = c10::cuda::CUDACachingAllocator;

// Index 0 of every StatArray is StatType::AGGREGATE (all pools), in every
// libtorch that has these statistics; the enum's home moved between
// versions, the index did not.
constexpr std::size_t kAggregate = 0;

int device_count() {
  try {
    return static_cast<int>(c10::cuda::device_count());
  } catch (const std::exception&) {
    return 0;
  }
}

}  // namespace

bool compiled_in() {
  return true;
}

bool available() {
  return device_count() > 0;
}

bool allocator_stats(int cuda_index, AllocatorStats* out) {
  if (cuda_index < 0 || cuda_index >= device_count()) return false;
  try {
    const auto stats = alloc::getDeviceStats(static_cast<c10::DeviceIndex>(cuda_index));
    out->allocated_current = stats.allocated_bytes[kAggregate].current;
    out->allocated_peak = stats.allocated_bytes[kAggregate].peak;
    out->reserved_current = stats.reserved_bytes[kAggregate].current;
    out->reserved_peak = stats.reserved_bytes[kAggregate].peak;
    out->active_current = stats.active_bytes[kAggregate].current;
    out->active_peak = stats.active_bytes[kAggregate].peak;
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

std::string snapshot_pickle(std::string* error) {
  try {
    return torch::cuda::_memory_snapshot_pickled();
  } catch (const std::exception& e) {
    if (error != nullptr) *error = e.what();
    return {};
  }
}

bool record_history(bool enabled, std::int64_t max_entries, std::string* error) {
  try {
    // (enabled, record_context, trace_alloc_max_entries,
    //  trace_alloc_record_context, record_cpp_context): the bool overload
    // exists from 2.0 on with these five leading parameters.
    torch::cuda::_record_memory_history(enabled, /*record_context=*/true, max_entries,
                                        /*trace_alloc_record_context=*/true,
                                        /*record_cpp_context=*/false);
    return true;
  } catch (const std::exception& e) {
    if (error != nullptr) *error = e.what();
    return false;
  }
}

void attach_oom_observer() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (!available()) return;
    // Observers cannot be removed: this one forwards to whichever sink runs
    // (none: nothing happens). It only records the event; the snapshot is
    // taken later, outside the allocator's lock.
    alloc::attachOutOfMemoryObserver(
        [](auto device, auto alloc_bytes, auto /*device_total*/, auto /*device_free*/) {
          notify_out_of_memory(cuda_device(static_cast<int>(device)),
                               static_cast<std::int64_t>(alloc_bytes));
        });
  });
}

}  // namespace regiontrace::memory::cuda
