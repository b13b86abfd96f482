// What the memory_snapshot sink costs.
//
// - Per allocation: a small torch::empty (alloc + free) inside an open
//   region, with no sink (the bare baseline), with the sink and
//   track_allocations off, and with it on. Target: tracking on adds at most
//   1.5x to the bare loop. Also libtorch's own share: its memory reporting
//   with a reporter that does nothing (its bookkeeping of sizes under a
//   mutex), which any memory reporter, the profiler's included, costs.
//   BM_AllocationInterleaved measures the four in batches, taking turns,
//   many rounds: each batch starts its configuration (a sink instance, as an
//   application's init() would), warms it up until it is in its steady state
//   (the reporter installed, the tracking table's pages touched: the
//   allocation loop marches through ~1,700 addresses, some 200 kB of heap),
//   then times a batch (thread CPU time) and shuts down. Each
//   configuration's fastest batch is the figure other work disturbed least,
//   and the turns make a busy moment hit every configuration alike. The
//   verdict takes the fastest repetition's figures (--benchmark_repetitions).
// - Per region pair (enter + exit) with the sink on (figures, RSS read,
//   record queued), with rss off, and with no sink.
// - The live-allocation table alone, per erase + insert, with the default
//   bound and 10,000 or 90,000 live entries, for three address patterns:
//   64-byte allocations packed page after page (a slab allocator), a march
//   in 192-byte steps (glibc under c10's 64-byte alignment), and random.
// Every configuration runs in this process, in this run; the ratios are
// printed at the end.
#include <benchmark/benchmark.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "bench_workload.hpp"
#include "live_allocation_table.hpp"
#include "ratio_reporter.hpp"
#include "regiontrace/regiontrace.hpp"

namespace {

namespace fs = std::filesystem;
using regiontrace::memory::bench::empty_loop;
using regiontrace::memory::bench::LibtorchReportingOnly;

constexpr std::int64_t kBatch = 256;

std::string output_dir() {
  static const std::string dir = [] {
    const fs::path p = fs::temp_directory_path() / "regiontrace_memory_bench";
    fs::create_directories(p);
    return p.string();
  }();
  return dir;
}

// Starts the sink (or nothing, for the baselines).
void start(bool sink, const std::map<std::string, std::string>& values = {}) {
  regiontrace::Options o;
  o.read_environment = false;
  o.set("log_level", "warn");
  o.set("handle_signals", "false");
  if (sink) {
    o.set("plugins.paths", REGIONTRACE_BUILTIN_PLUGIN_DIR);
    o.set("output_dir", output_dir());
    o.set("sinks.memory_snapshot.enabled", "true");
    o.set("sinks.memory_snapshot.trace", "false");
    for (const auto& [k, v] : values) o.set("sinks.memory_snapshot." + k, v);
  }
  regiontrace::init(o);
}

double thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

enum Config { kBare, kLibtorchOnly, kTrackOff, kTrackOn, kConfigs };
const char* const kConfigNames[kConfigs] = {"bare_ns", "libtorch_reporting_ns", "track_off_ns",
                                            "track_on_ns"};

// Allocations after each start before the timed batch: the first ~3,000
// with tracking on fault in the table's pages (about 1.5 us each); 8192
// leave the timed batch in the steady state.
constexpr std::int64_t kWarmup = 8192;
constexpr std::int64_t kTimed = 2048;

// ns per allocation (alloc + free) of one batch in configuration `c`.
double batch(Config c) {
  const bool sink = c == kTrackOff || c == kTrackOn;
  start(sink, {{"track_allocations", c == kTrackOn ? "true" : "false"}, {"rss", "false"}});
  double ns = 0;
  {
    RT_REGION("bench_allocations");
    empty_loop(kWarmup);
    if (c == kLibtorchOnly) {
      LibtorchReportingOnly reporting;
      empty_loop(kBatch);  // the same warm start for libtorch's own reporting
      const double t0 = thread_cpu_ns();
      empty_loop(kTimed);
      ns = thread_cpu_ns() - t0;
    } else {
      const double t0 = thread_cpu_ns();
      empty_loop(kTimed);
      ns = thread_cpu_ns() - t0;
    }
  }
  regiontrace::shutdown();
  return ns / static_cast<double>(kTimed);
}

const char* const kInterleavedName = "BM_AllocationInterleaved/iterations:1";

void BM_AllocationInterleaved(benchmark::State& state) {
  constexpr int kRounds = 60;
  double best[kConfigs];
  std::fill(best, best + kConfigs, std::numeric_limits<double>::max());
  for (auto _ : state) {
    for (int round = 0; round < kRounds; ++round) {
      // Rotate the order so that no configuration always goes first.
      for (int k = 0; k < kConfigs; ++k) {
        const auto c = static_cast<Config>((k + round) % kConfigs);
        best[c] = std::min(best[c], batch(c));
      }
    }
  }
  for (int c = 0; c < kConfigs; ++c) state.counters[kConfigNames[c]] = best[c];
  state.counters["track_off_ratio"] = best[kTrackOff] / best[kBare];
  state.counters["track_on_ratio"] = best[kTrackOn] / best[kBare];
}

// The same, one configuration per benchmark (Google Benchmark's own timing).
void allocations(benchmark::State& state, bool sink, bool track) {
  start(sink, {{"track_allocations", track ? "true" : "false"}});
  {
    RT_REGION("bench_allocations");
    for (auto _ : state) empty_loop(kBatch);
  }
  regiontrace::shutdown();
  state.SetItemsProcessed(state.iterations() * kBatch);
}
void BM_Allocation_Bare(benchmark::State& s) {
  allocations(s, false, false);
}
void BM_Allocation_SinkTrackOff(benchmark::State& s) {
  allocations(s, true, false);
}
void BM_Allocation_SinkTrackOn(benchmark::State& s) {
  allocations(s, true, true);
}

void region_pairs(benchmark::State& state, bool sink, bool rss) {
  // A queue large enough that few records are dropped while the writer
  // catches up (dropped ones are reported).
  start(sink, {{"rss", rss ? "true" : "false"}, {"queue_capacity", "262144"}});
  for (auto _ : state) {
    for (std::int64_t i = 0; i < kBatch; ++i) {
      RT_REGION("bench_region");
    }
  }
  regiontrace::shutdown();
  state.SetItemsProcessed(state.iterations() * kBatch);
}
void BM_RegionPair_NoSink(benchmark::State& s) {
  region_pairs(s, false, false);
}
void BM_RegionPair_Sink(benchmark::State& s) {
  region_pairs(s, true, true);
}
void BM_RegionPair_SinkNoRss(benchmark::State& s) {
  region_pairs(s, true, false);
}

// The oldest entry freed, a new one made, `live` entries kept: what the
// table sees from an allocator in its steady state.
void BM_TableChurn(benchmark::State& state, int pattern, std::size_t live) {
  using regiontrace::memory::LiveAllocation;
  using regiontrace::memory::LiveAllocationTable;
  LiveAllocationTable table(100000, 64);  // max_tracked's default
  std::mt19937_64 rng(1);
  const std::uintptr_t base = 0x7f0000000000;
  std::uintptr_t n = 0;
  const auto next = [&] {
    ++n;
    if (pattern == 0) return base + 64 * n;
    if (pattern == 1) return base + 192 * n;
    return base + 64 * (rng() % (std::uintptr_t{1} << 30));
  };
  std::vector<std::uintptr_t> ring(live);
  for (std::uintptr_t& address : ring) {
    LiveAllocation a;
    a.address = address = next();
    a.bytes = 64;
    table.insert(a, nullptr);
  }
  std::size_t oldest = 0;
  for (auto _ : state) {
    table.erase(ring[oldest], nullptr);
    LiveAllocation a;
    a.address = ring[oldest] = next();
    a.bytes = 64;
    table.insert(a, nullptr);
    oldest = oldest + 1 == live ? 0 : oldest + 1;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK_CAPTURE(BM_TableChurn, packed_10000, 0, 10000);
BENCHMARK_CAPTURE(BM_TableChurn, packed_90000, 0, 90000);
BENCHMARK_CAPTURE(BM_TableChurn, march_10000, 1, 10000);
BENCHMARK_CAPTURE(BM_TableChurn, march_90000, 1, 90000);
BENCHMARK_CAPTURE(BM_TableChurn, random_10000, 2, 10000);
BENCHMARK_CAPTURE(BM_TableChurn, random_90000, 2, 90000);

BENCHMARK(BM_AllocationInterleaved)->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Allocation_Bare);
BENCHMARK(BM_Allocation_SinkTrackOff);
BENCHMARK(BM_Allocation_SinkTrackOn);
BENCHMARK(BM_RegionPair_NoSink);
BENCHMARK(BM_RegionPair_Sink);
BENCHMARK(BM_RegionPair_SinkNoRss);

// The ratios, from the interleaved counters and the fastest repetition
// of each benchmark.
void print_ratios(const regiontrace::bench::RatioReporter& reporter) {
  // Each configuration's fastest batch, in its fastest repetition.
  const auto spread = [&](const char* counter) {
    return reporter.counter_spread(kInterleavedName, counter);
  };
  const regiontrace::bench::Spread bare_s = spread("bare_ns");
  const regiontrace::bench::Spread off_s = spread("track_off_ns");
  const regiontrace::bench::Spread on_s = spread("track_on_ns");
  const double bare = bare_s.min;
  const double floor = spread("libtorch_reporting_ns").min;
  const double off = off_s.min;
  const double on = on_s.min;
  if (bare > 0) {
    std::printf(
        "\nper allocation (torch::empty of 16 floats, alloc + free; interleaved, warm, fastest "
        "batch of the fastest repetition):\n");
    std::printf(
        "  bare %.1f ns; track off %.1f ns (%.2fx); track on %.1f ns (%.2fx; target "
        "<= 1.5x)\n",
        bare, off, off / bare, on, on / bare);
    std::printf(
        "  libtorch's own memory reporting (a reporter doing nothing): %.1f ns "
        "(%.2fx); the sink adds %+.1f ns (track off), %+.1f ns (track on)\n",
        floor, floor / bare, off - floor, on - floor);
  }
  const double b = reporter.fastest_ns_per_item("BM_Allocation_Bare");
  const double o = reporter.fastest_ns_per_item("BM_Allocation_SinkTrackOff");
  const double t = reporter.fastest_ns_per_item("BM_Allocation_SinkTrackOn");
  if (b > 0) {
    std::printf(
        "  one benchmark each: bare %.1f ns, track off %.1f ns (%.2fx), track on %.1f "
        "ns (%.2fx)\n",
        b, o, o / b, t, t / b);
  }
  const double none = reporter.fastest_ns_per_item("BM_RegionPair_NoSink");
  const double pair = reporter.fastest_ns_per_item("BM_RegionPair_Sink");
  const double pair_norss = reporter.fastest_ns_per_item("BM_RegionPair_SinkNoRss");
  if (pair > 0) {
    std::printf("per region pair (enter + exit):\n");
    std::printf(
        "  no sink %.1f ns; sink %.1f ns (+%.1f ns); sink with rss off %.1f ns "
        "(+%.1f ns)\n",
        none, pair, pair - none, pair_norss, pair_norss - none);
  }
  using regiontrace::bench::print_verdict;
  using regiontrace::bench::Verdict;
  if (bare > 0) {
    Verdict v;
    v.name = "allocation, track_allocations on (interleaved)";
    v.min = on;
    v.median = on_s.count > 1 ? on_s.median : 0;
    v.baseline = "bare allocation";
    v.baseline_min = bare;
    v.goal = Verdict::Goal::kRatioAtMost;
    v.target = 1.5;
    print_verdict(v);
    v.name = "allocation, track_allocations off (interleaved)";
    v.min = off;
    v.median = off_s.count > 1 ? off_s.median : 0;
    print_verdict(v);
  }
  const std::pair<const char*, const char*> kPatterns[] = {
      {"packed", "packed 64-byte"}, {"march", "192-byte march"}, {"random", "random"}};
  for (const auto& [key, words] : kPatterns) {
    for (const char* live : {"10000", "90000"}) {
      const double ns =
          reporter.fastest_ns_per_item(std::string("BM_TableChurn/") + key + "_" + live);
      if (ns <= 0) continue;
      print_verdict(std::string("live-allocation table, erase + insert, ") + words +
                        " addresses, " + live + " live",
                    "ns", ns);
    }
  }
  const auto with_rss = reporter.ns_per_item_spread("BM_RegionPair_Sink");
  const auto without_rss = reporter.ns_per_item_spread("BM_RegionPair_SinkNoRss");
  if (with_rss.count > 0) {
    Verdict v;
    v.name = "region pair, sink with rss on";
    v.min = with_rss.min;
    v.median = with_rss.median;
    v.baseline = "rss off";
    v.baseline_min = without_rss.min;
    v.goal = Verdict::Goal::kAtMost;
    v.target = 300;
    print_verdict(v);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<char*> args(argv, argv + argc);
  bool repetitions_given = false;
  for (int i = 1; i < argc; ++i) {
    repetitions_given =
        repetitions_given || std::string(argv[i]).rfind("--benchmark_repetitions", 0) == 0;
  }
  static char repetitions[] = "--benchmark_repetitions=3";
  if (!repetitions_given) args.push_back(repetitions);
  int count = static_cast<int>(args.size());
  args.push_back(nullptr);
  benchmark::Initialize(&count, args.data());
  regiontrace::bench::RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  print_ratios(reporter);
  benchmark::Shutdown();
  return 0;
}
