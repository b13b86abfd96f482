// What a region costs on a rank that `ranks` leaves out: its sinks are never
// built, so it should cost what a region costs with nothing configured (one
// relaxed load and a branch), not what a running sink costs. Both, and a
// sink running on this rank, are measured in the same run.
#include <benchmark/benchmark.h>

#include "ratio_reporter.hpp"
#include "regiontrace/regiontrace.hpp"

namespace {

// A rank no launcher gives: the sink runs on another rank than this one,
// whatever RANK this benchmark runs under.
constexpr const char* kOtherRank = "1000000";

void start(const char* ranks) {
  regiontrace::shutdown();
  regiontrace::Options o;
  o.read_environment = false;
  o.set("plugins.paths", REGIONTRACE_BENCH_PLUGIN_DIR);
  o.set("log_level", "warn");
  o.set("handle_signals", "false");
  o.set("output_dir", "/tmp/regiontrace_bench");
  if (ranks != nullptr) {
    o.set("sinks.noop.enabled", "true");
    o.set("ranks", ranks);
  }
  regiontrace::init(o);
}

// One call site for every case: only the configuration differs, not the
// code (or its alignment) being timed.
void region_loop(benchmark::State& state) {
  for (auto _ : state) {
    RT_REGION("bench.rank_filter");
    benchmark::ClobberMemory();
  }
}

void BM_EmptyLoop(benchmark::State& state) {
  for (auto _ : state) benchmark::ClobberMemory();
}
BENCHMARK(BM_EmptyLoop);

void BM_RegionNothingConfigured(benchmark::State& state) {
  start(nullptr);
  region_loop(state);
  regiontrace::shutdown();
}
BENCHMARK(BM_RegionNothingConfigured);

void BM_RegionSinkOnOtherRank(benchmark::State& state) {
  start(kOtherRank);
  if (regiontrace::enabled()) state.SkipWithError("a sink runs on this rank");
  region_loop(state);
  regiontrace::shutdown();
}
BENCHMARK(BM_RegionSinkOnOtherRank);

void BM_RegionSinkOnThisRank(benchmark::State& state) {
  start("");  // empty: every rank
  region_loop(state);
  regiontrace::shutdown();
}
BENCHMARK(BM_RegionSinkOnThisRank);

}  // namespace

int main(int argc, char** argv) {
  return regiontrace::bench::run_with_ratios(
      argc, argv,
      {
          {"BM_RegionSinkOnOtherRank", "BM_RegionNothingConfigured", 0, 1.5},
          {"BM_RegionSinkOnThisRank", "BM_RegionNothingConfigured", 0, 0},
      },
      "BM_EmptyLoop");
}
