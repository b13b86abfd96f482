// The libtorch calls the benchmark measures, in their own translation unit
// (the only one of the benchmark that includes libtorch headers).
#pragma once

#include <cstdint>

namespace regiontrace::memory::bench {

// n times: a small CPU tensor (torch::empty of 16 floats), dropped at once.
void empty_loop(std::int64_t n);

// libtorch's own share of the cost: while this guard lives, a reporter that
// asks for memory events and ignores them sits in this thread's
// PROFILER_STATE slot (what libtorch does for any memory reporter, with
// nothing done on the sink's side).
class LibtorchReportingOnly {
 public:
  LibtorchReportingOnly();
  ~LibtorchReportingOnly();
  LibtorchReportingOnly(const LibtorchReportingOnly&) = delete;
  LibtorchReportingOnly& operator=(const LibtorchReportingOnly&) = delete;
};

}  // namespace regiontrace::memory::bench
