// What a region costs the application: with nothing configured (the promise:
// one relaxed load and a branch), configured but not routed to any sink, and
// routed to one sink that does nothing. Anchors measured in the same run:
// an empty loop, raw NVTX3 push/pop with no tool attached, and libtorch's
// RECORD_USER_SCOPE with no profiler (in their own files).
#include <benchmark/benchmark.h>

#include "ratio_reporter.hpp"
#include "regiontrace/regiontrace.hpp"

namespace {

void start(const char* regions) {
  regiontrace::shutdown();
  regiontrace::Options o;
  o.read_environment = false;
  o.set("plugins.paths", REGIONTRACE_BENCH_PLUGIN_DIR);
  o.set("log_level", "warn");
  o.set("handle_signals", "false");
  o.set("sinks.noop.regions", regions);
  o.set("output_dir", "/tmp/regiontrace_bench");
  regiontrace::init(o);
}

void stop_everything() {
  regiontrace::shutdown();
  regiontrace::Options o;
  o.read_environment = false;
  regiontrace::init(o);  // no sink: off
}

void BM_EmptyLoop(benchmark::State& state) {
  for (auto _ : state) benchmark::ClobberMemory();
}
BENCHMARK(BM_EmptyLoop);

void BM_RegionDisabled(benchmark::State& state) {
  stop_everything();
  for (auto _ : state) {
    RT_REGION("bench.disabled");
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_RegionDisabled);

void BM_RegionConfiguredNotRouted(benchmark::State& state) {
  start("profiler_region_model_loading");
  for (auto _ : state) {
    RT_REGION("bench.unrouted");
    benchmark::ClobberMemory();
  }
  regiontrace::shutdown();
}
BENCHMARK(BM_RegionConfiguredNotRouted);

void BM_RegionOneNoOpSink(benchmark::State& state) {
  start("*");
  for (auto _ : state) {
    RT_REGION("bench.routed");
    benchmark::ClobberMemory();
  }
  regiontrace::shutdown();
}
BENCHMARK(BM_RegionOneNoOpSink);

void BM_RegionOneNoOpSinkThreads(benchmark::State& state) {
  if (state.thread_index() == 0) start("*");
  for (auto _ : state) {
    RT_REGION("bench.routed_threads");
    benchmark::ClobberMemory();
  }
  if (state.thread_index() == 0) regiontrace::shutdown();
}
BENCHMARK(BM_RegionOneNoOpSinkThreads)->Threads(2)->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  using regiontrace::bench::Comparison;
  return regiontrace::bench::run_with_ratios(
      argc, argv,
      {
          {"BM_NvtxRawNoTool", "", 0, 0},
          {"BM_RecordUserScopeNoProfiler", "", 0, 0},
          {"BM_NvtxPushPopNoTool", "", 0, 0},
          {"BM_RegionDisabled", "BM_NvtxRawNoTool", 1.0, 0},
          // RT_REGION as users write it, no dearer than the NVTX pair they
          // would write instead
          {"BM_RegionDisabled", "BM_NvtxPushPopNoTool", 0, 1.0},
          {"BM_RegionConfiguredNotRouted", "BM_NvtxRawNoTool", 5.0, 0},
          {"BM_RegionOneNoOpSink", "BM_RecordUserScopeNoProfiler", 25.0, 0},
          // and cheaper than libtorch's own annotation with nobody listening
          {"BM_RegionOneNoOpSink", "BM_RecordUserScopeNoProfiler", 0, 1.0},
      },
      "BM_EmptyLoop");
}
