// What the region_stats sink costs per region enter+exit, against the two
// clock reads any timing of a region needs:
//
//   BM_TwoClockReads          clock_gettime(CLOCK_MONOTONIC) twice: the floor
//   BM_SinkCallbacks          the sink's own work (per-thread tree lookup,
//                             totals, histogram, bucket, step row) with its
//                             two clock reads, no dispatcher
//   BM_RecordedRegionPair     RT_REGION with the sink running: the whole path
//                             (dispatcher, event building, clock, sink)
//   BM_RecordedNestedPair     the same one level inside another region
//
// CPU ns per iteration net of an empty loop (the machines are shared), with
// the ratio to the two clock reads printed by bench/ratio_reporter.
#include <benchmark/benchmark.h>
#include <time.h>

#include "ratio_reporter.hpp"
#include "regiontrace/regiontrace.hpp"
#include "thread_stats.hpp"

namespace {

std::int64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

void start_sink() {
  regiontrace::shutdown();
  regiontrace::Options o;
  o.read_environment = false;
  o.set("plugins.paths", REGIONTRACE_BENCH_SINK_DIR);
  o.set("log_level", "warn");
  o.set("handle_signals", "false");
  o.set("output_dir", "/tmp/regiontrace_region_stats_bench");
  o.set("sinks.region_stats.table", "off");
  o.set("sinks.region_stats.json", "false");
  regiontrace::init(o);
  regiontrace::set_step(3);
}

void BM_EmptyLoop(benchmark::State& state) {
  for (auto _ : state) benchmark::ClobberMemory();
}
BENCHMARK(BM_EmptyLoop);

void BM_TwoClockReads(benchmark::State& state) {
  for (auto _ : state) {
    benchmark::DoNotOptimize(now_ns());
    benchmark::DoNotOptimize(now_ns());
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_TwoClockReads);

void BM_SinkCallbacks(benchmark::State& state) {
  regiontrace::region_stats::ThreadStats stats(1, {1000, 10000, 100000, 1000000, 10000000}, 1000);
  regiontrace::RegionEvent e;
  e.id = 1;
  e.name = "bench_region";
  e.path = "bench_region";
  e.step = 3;
  e.thread_id = 1;
  for (auto _ : state) {
    e.time_ns = now_ns();
    stats.begin(e);
    e.begin_time_ns = e.time_ns;
    e.time_ns = now_ns();
    stats.end(e);
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_SinkCallbacks);

void BM_RecordedRegionPair(benchmark::State& state) {
  start_sink();
  for (auto _ : state) {
    RT_REGION("bench_region");
    benchmark::ClobberMemory();
  }
  regiontrace::shutdown();
}
BENCHMARK(BM_RecordedRegionPair);

void BM_RecordedNestedPair(benchmark::State& state) {
  start_sink();
  {
    RT_REGION("bench_outer");
    for (auto _ : state) {
      RT_REGION("bench_inner");
      benchmark::ClobberMemory();
    }
  }
  regiontrace::shutdown();
}
BENCHMARK(BM_RecordedNestedPair);

}  // namespace

int main(int argc, char** argv) {
  using regiontrace::bench::Comparison;
  return regiontrace::bench::run_with_ratios(
      argc, argv,
      {
          {"BM_TwoClockReads", "", 0, 0},
          {"BM_SinkCallbacks", "BM_TwoClockReads", 0, 1.5},
          {"BM_RecordedRegionPair", "BM_TwoClockReads", 0, 3.0},
          {"BM_RecordedNestedPair", "BM_TwoClockReads", 0, 3.0},
      },
      "BM_EmptyLoop");
}
