// Anchor: libtorch's RECORD_USER_SCOPE with no profiler listening.
#include <ATen/record_function.h>
#include <benchmark/benchmark.h>

namespace {

void BM_RecordUserScopeNoProfiler(benchmark::State& state) {
  for (auto _ : state) {
    RECORD_USER_SCOPE("bench.torch");
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_RecordUserScopeNoProfiler);

}  // namespace
