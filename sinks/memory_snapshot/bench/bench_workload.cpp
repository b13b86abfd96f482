#include "bench_workload.hpp"

#include <ATen/ATen.h>
#include <benchmark/benchmark.h>
#include <c10/core/Allocator.h>
#include <c10/util/ThreadLocalDebugInfo.h>

namespace regiontrace::memory::bench {

void empty_loop(std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) {
    at::Tensor t = at::empty({16}, at::kFloat);
    benchmark::DoNotOptimize(t.data_ptr());
  }
}

namespace {

class IgnoringReporter final : public c10::MemoryReportingInfoBase {
 public:
  // libtorch 1.13 passes totals as int64_t, 2.x as size_t: one of these
  // overrides, the other is an unused overload.
  void reportMemoryUsage(void*, std::int64_t, std::int64_t, std::int64_t, c10::Device) {}
  void reportMemoryUsage(void*, std::int64_t, std::size_t, std::size_t, c10::Device) {}
  bool memoryProfilingEnabled() const override { return true; }
};

}  // namespace

LibtorchReportingOnly::LibtorchReportingOnly() {
  c10::ThreadLocalDebugInfo::_push(c10::DebugInfoKind::PROFILER_STATE,
                                   std::make_shared<IgnoringReporter>());
}

LibtorchReportingOnly::~LibtorchReportingOnly() {
  c10::ThreadLocalDebugInfo::_pop(c10::DebugInfoKind::PROFILER_STATE);
}

}  // namespace regiontrace::memory::bench
