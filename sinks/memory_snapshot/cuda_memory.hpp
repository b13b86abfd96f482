// The CUDA side of the memory sink, behind one small interface so that the
// code needing CUDA-enabled libtorch sits in one file (cuda_memory_cuda.cpp),
// compiled only when REGIONTRACE_MEMORY_SNAPSHOT_CUDA is on (CMake: on when
// libtorch has CUDA). Without it, cuda_memory_none.cpp answers "not
// available" and the sink accounts for the CPU only.
#pragma once

#include <cstdint>
#include <string>

namespace regiontrace::memory::cuda {

// Whether this build has the CUDA part at all.
bool compiled_in();
// compiled_in() and at least one CUDA device.
bool available();

struct AllocatorStats {
  std::int64_t allocated_current = 0, allocated_peak = 0;
  std::int64_t reserved_current = 0, reserved_peak = 0;
  std::int64_t active_current = 0, active_peak = 0;
};
// The caching allocator's device statistics (all pools). False when the
// device is out of range or CUDA is not available.
bool allocator_stats(int cuda_index, AllocatorStats* out);

// torch::cuda::_memory_snapshot_pickled(): the whole allocator state, which
// PyTorch's memory_viz opens. Empty with *error set on failure.
std::string snapshot_pickle(std::string* error);

// torch::cuda::_record_memory_history on or off, keeping `max_entries`
// allocation events with their context.
bool record_history(bool enabled, std::int64_t max_entries, std::string* error);

// Registers, once per process, an observer for CUDA out-of-memory errors
// that forwards to allocation_reporter's notify_out_of_memory.
void attach_oom_observer();

}  // namespace regiontrace::memory::cuda
