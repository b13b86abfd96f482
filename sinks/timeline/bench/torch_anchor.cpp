// Anchor: libtorch's RECORD_USER_SCOPE while the (Kineto, CPU) profiler
// records: what a user scope costs when a trace is being taken. A fixed
// count of iterations, since the profiler keeps every event in memory.
#include <ATen/record_function.h>
#include <benchmark/benchmark.h>
#include <torch/csrc/autograd/profiler_kineto.h>

namespace {

void BM_RecordUserScopeUnderProfiler(benchmark::State& state) {
  namespace prof = torch::autograd::profiler;
  const prof::ProfilerConfig config(prof::ProfilerState::KINETO);
  const std::set<prof::ActivityType> cpu{prof::ActivityType::CPU};
  prof::prepareProfiler(config, cpu);
  prof::enableProfiler(config, cpu);
  for (auto _ : state) {
    RECORD_USER_SCOPE("bench.torch");
    benchmark::ClobberMemory();
  }
  prof::disableProfiler();  // after the timed loop
}
BENCHMARK(BM_RecordUserScopeUnderProfiler)->Iterations(1000000);

}  // namespace
