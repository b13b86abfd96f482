// The CUDA part of the memory sink when libtorch has no CUDA (or the
// REGIONTRACE_MEMORY_SNAPSHOT_CUDA switch is off): nothing to report.
#include "cuda_memory.hpp"

namespace regiontrace::memory::cuda {

bool compiled_in() {
  return false;
}
bool available() {
  return false;
}
bool allocator_stats(int, AllocatorStats*) {
  return false;
}

std::string snapshot_pickle(std::string* error) {
  if (error != nullptr) *error = "this build of the memory_snapshot sink has no CUDA support";
  return {};
}

bool record_history(bool, std::int64_t, std::string* error) {
  if (error != nullptr) *error = "this build of the memory_snapshot sink has no CUDA support";
  return false;
}

void attach_oom_observer() {}

}  // namespace regiontrace::memory::cuda
