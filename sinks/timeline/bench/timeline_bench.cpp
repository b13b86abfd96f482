// What the timeline sink costs the application thread, measured against the
// things it is judged by, in one run (CPU time per iteration: the machine
// is shared; net of an empty loop):
//   - a recorded region pair against the two clock reads it needs (the
//     SDK's calibrated clock, which the core stamps events with): target
//     at most +10 ns, judged from batches of each interleaved in one
//     benchmark (BM_OverClocks*);
//   - a region pair with a no-op sink of default interests (timestamps on)
//     against the same two reads: at most +10 ns;
//   - against raw NVTX push/pop with the recording tool attached, and
//     against RECORD_USER_SCOPE under the torch profiler (where built);
//   - sustained: 2 threads recording as fast as they can with the writer
//     draining, default buffer: at least 5M region pairs/s and no drops.
#include <benchmark/benchmark.h>
#include <dlfcn.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "ratio_reporter.hpp"
#include "regiontrace/plugin.hpp"
#include "regiontrace/regiontrace.hpp"
#include "regiontrace/sdk/clock.hpp"
#include "timeline_bench_anchors.hpp"

namespace {

const std::string& output_dir() {
  static const std::string dir = [] {
    const auto d = std::filesystem::temp_directory_path() / "regiontrace_timeline_bench";
    std::filesystem::create_directories(d);
    // The last run's files, and its regiontrace_config/ folder of files.
    // Not remove_all: see tests/elf/check_no_remove_all.sh.
    for (const auto& entry : std::filesystem::directory_iterator(d)) {
      if (entry.is_directory()) {
        for (const auto& inner : std::filesystem::directory_iterator(entry.path())) {
          std::filesystem::remove(inner.path());
        }
      }
      std::filesystem::remove(entry.path());
    }
    return d.string();
  }();
  return dir;
}

// `flush_interval_s`: how often the flight recorder writes (the default, 1 s,
// flushes a one-second benchmark about once).
void start(const std::string& sink, const std::map<std::string, std::string>& keys = {},
           const char* flush_interval_s = "1") {
  regiontrace::shutdown();
  regiontrace::Options o;
  o.read_environment = false;
  o.set("flush_interval_s", flush_interval_s);
  o.set("plugins.paths", REGIONTRACE_BENCH_PLUGIN_DIRS);
  o.set("log_level", "error");  // BM_RegionTimeline passes max_events on purpose
  o.set("handle_signals", "false");
  o.set("output_dir", output_dir());
  o.set("sinks." + sink + ".regions", "*");
  for (const auto& [k, v] : keys) o.set("sinks." + sink + "." + k, v);
  regiontrace::init(o);
}

// The "dropped" count of the trace's "timeline" member, which comes last in
// the file: the whole stream is read, its last 64 KiB kept. -1: no trace,
// or no such member (the verdict below then fails).
long long dropped_in_last_trace() {
  for (const auto& entry : std::filesystem::directory_iterator(output_dir())) {
    const std::string name = entry.path().filename().string();
    // timeline_rank<r>_..., or timeline_<session>_rank<r>_... after the first init().
    if (name.rfind("timeline_", 0) != 0 || name.find(".json.gz") == std::string::npos) continue;
    gzFile f = gzopen(entry.path().c_str(), "rb");
    std::string tail;
    std::vector<char> block(1 << 20);
    for (int n;
         f != nullptr && (n = gzread(f, block.data(), static_cast<unsigned>(block.size()))) > 0;) {
      tail.append(block.data(), static_cast<std::size_t>(n));
      if (tail.size() > (std::size_t{1} << 17)) tail.erase(0, tail.size() - (std::size_t{1} << 16));
    }
    if (f != nullptr) gzclose(f);
    std::filesystem::remove(entry.path());
    const std::size_t member = tail.rfind("\"timeline\":{");
    if (member == std::string::npos) return -1;
    const std::size_t at = tail.find("\"dropped\":", member);
    return at == std::string::npos ? -1 : std::atoll(tail.c_str() + at + 10);
  }
  return -1;
}

void BM_EmptyLoop(benchmark::State& state) {
  for (auto _ : state) benchmark::ClobberMemory();
}
BENCHMARK(BM_EmptyLoop);

void BM_TwoClockReads(benchmark::State& state) {
  for (auto _ : state) {
    benchmark::DoNotOptimize(regiontrace::sdk::clock::now_ns());
    benchmark::DoNotOptimize(regiontrace::sdk::clock::now_ns());
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_TwoClockReads);

void BM_TwoClockGettime(benchmark::State& state) {
  for (auto _ : state) {
    benchmark::DoNotOptimize(regiontrace::sdk::clock::monotonic_ns());
    benchmark::DoNotOptimize(regiontrace::sdk::clock::monotonic_ns());
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_TwoClockGettime);

#if defined(__x86_64__)
// The floor under the SDK clock: two raw TSC reads, unscaled.
void BM_TwoRdtsc(benchmark::State& state) {
  for (auto _ : state) {
    benchmark::DoNotOptimize(__builtin_ia32_rdtsc());
    benchmark::DoNotOptimize(__builtin_ia32_rdtsc());
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_TwoRdtsc);
#endif

void BM_RegionNoOpTimedSink(benchmark::State& state) {
  start("noop_timed");
  for (auto _ : state) {
    RT_REGION("bench.noop_timed");
    benchmark::ClobberMemory();
  }
  regiontrace::shutdown();
}
BENCHMARK(BM_RegionNoOpTimedSink);

// The host's side of a span sink alone: recorded and handed over, then
// ignored.
void BM_RegionNoOpSpansSink(benchmark::State& state) {
  start("noop_spans");
  for (auto _ : state) {
    RT_REGION("bench.noop_spans");
    benchmark::ClobberMemory();
  }
  regiontrace::shutdown();
}
BENCHMARK(BM_RegionNoOpSpansSink);

// Capped at 1M kept spans so the trace written after the loop stays small;
// past the cap the writer thread drops, the application thread's work is
// the same.
void BM_RegionTimeline(benchmark::State& state) {
  start("timeline", {{"max_events", "1000000"}});
  for (auto _ : state) {
    RT_REGION("bench.timeline");
    benchmark::ClobberMemory();
  }
  regiontrace::shutdown();
  dropped_in_last_trace();
}
BENCHMARK(BM_RegionTimeline);

// A sink's own callbacks, without the host's dispatch: built from the
// plugin file as the host builds it, fed the events the host would send,
// stamped with the same two clock reads.
regiontrace::Sink* direct_sink(const char* file, const char* name,
                               const std::map<std::string, std::string>& settings) {
  void* handle = dlopen(file, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) throw std::runtime_error(dlerror());
  auto descriptor = reinterpret_cast<const regiontrace::PluginDescriptor* (*)()>(
      dlsym(handle, "regiontrace_plugin_descriptor"));
  if (descriptor == nullptr) throw std::runtime_error("not a regiontrace plugin");
  static const regiontrace::HostApi host{nullptr, &regiontrace::sdk::clock::now_ns, nullptr};
  regiontrace::SinkContext ctx(name, output_dir(), 0, 0, 1, static_cast<long>(getpid()), &host);
  for (const regiontrace::KeySpec& k : descriptor()->schema()) {
    ctx.set_value(k.name, {k.default_value});
  }
  for (const auto& [key, value] : settings) ctx.set_value(key, {value});
  regiontrace::Sink* sink = descriptor()->create(ctx);
  sink->on_region_routed(regiontrace::RegionInfo{1, "bench.direct", "", 0});
  return sink;
}

regiontrace::Sink* direct_timeline_sink() {
  return direct_sink(REGIONTRACE_TIMELINE_SINK, "timeline", {{"max_events", "1000000"}});
}

// What the SDK's contract itself costs a sink with default interests: per
// pair two clock reads, two events built whole and two virtual calls into
// the plugin, with no host bookkeeping (stack, routing, paths). The floor
// under BM_RegionNoOpTimedSink.
class NoOpTimedFeed {
 public:
  NoOpTimedFeed() : sink_(direct_sink(REGIONTRACE_NOOP_TIMED_SINK, "noop_timed", {})) {}
  ~NoOpTimedFeed() { sink_->close(); }
  void pair() {
    const std::int64_t begin = regiontrace::sdk::clock::now_ns();
    sink_->on_region_begin(
        regiontrace::RegionEvent{1, kName, kName, 0, regiontrace::kNoStep, 1, begin, false, 0});
    sink_->on_region_end(regiontrace::RegionEvent{1, kName, kName, 0, regiontrace::kNoStep, 1,
                                                  regiontrace::sdk::clock::now_ns(), false, begin});
  }

 private:
  static constexpr std::string_view kName = "bench.direct";
  regiontrace::Sink* sink_;
};

void BM_NoOpTimedCallbacksWithClockReads(benchmark::State& state) {
  NoOpTimedFeed feed;
  for (auto _ : state) {
    feed.pair();
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_NoOpTimedCallbacksWithClockReads);

// The timeline sink's side of a region pair: two clock reads, one span in a
// batch of the host's size, and the sink's on_spans per batch.
class TimelineFeed {
 public:
  TimelineFeed() : sink_(direct_timeline_sink()), spans_(kBatch) {
    batch_.thread_id = 1;
    batch_.os_tid = static_cast<long>(getpid());
    batch_.spans = spans_.data();
  }
  ~TimelineFeed() {
    sink_->close();
    dropped_in_last_trace();
  }
  void pair() {
    regiontrace::Span& s = spans_[next_];
    s.id = 1;
    s.begin_ns = regiontrace::sdk::clock::now_ns();
    s.end_ns = regiontrace::sdk::clock::now_ns();
    if (++next_ == kBatch) {
      batch_.count = next_;
      sink_->on_spans(batch_);
      next_ = 0;
    }
  }

 private:
  static constexpr std::size_t kBatch = 1024;  // the host's SpanBuffer::kCapacity
  regiontrace::Sink* sink_;
  std::vector<regiontrace::Span> spans_;
  regiontrace::SpanBatch batch_;
  std::size_t next_ = 0;
};

void BM_TimelineCallbacksWithClockReads(benchmark::State& state) {
  TimelineFeed feed;
  for (auto _ : state) {
    feed.pair();
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_TimelineCallbacksWithClockReads);

// The judged figures: what a pair costs beyond its two clock reads,
// measured as a difference within one benchmark. Batches of the case and
// batches of two bare clock reads alternate (in turn first), and the
// figure is the median over batches of the per-pair difference in thread
// CPU time: whatever the machine does meanwhile (other programs, the
// frequency) falls on both alike. Run apart, the same two figures moved by
// 4-5 ns between runs minutes apart on this 2-core VM.
std::int64_t thread_cpu_ns() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<std::int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec;
}

__attribute__((noinline)) void clock_pairs(int n) {
  for (int i = 0; i < n; ++i) {
    benchmark::DoNotOptimize(regiontrace::sdk::clock::now_ns());
    benchmark::DoNotOptimize(regiontrace::sdk::clock::now_ns());
    benchmark::ClobberMemory();
  }
}

template <typename Pairs>
void over_clocks_interleaved(benchmark::State& state, Pairs pairs) {
  // Long enough that every batch holds its share of what recurs: 8 of the
  // host's 1024-span hand-overs, 4 of the timeline's 2048-span chunk trades.
  // A median over short batches would drop exactly those.
  constexpr int kBatch = 8192;
  std::vector<double> over;
  bool case_first = true;
  for (auto _ : state) {
    const std::int64_t t0 = thread_cpu_ns();
    if (case_first) {
      pairs(kBatch);
    } else {
      clock_pairs(kBatch);
    }
    const std::int64_t t1 = thread_cpu_ns();
    if (case_first) {
      clock_pairs(kBatch);
    } else {
      pairs(kBatch);
    }
    const std::int64_t t2 = thread_cpu_ns();
    const std::int64_t case_ns = case_first ? t1 - t0 : t2 - t1;
    const std::int64_t clocks_ns = case_first ? t2 - t1 : t1 - t0;
    over.push_back(static_cast<double>(case_ns - clocks_ns) / kBatch);
    case_first = !case_first;
  }
  if (over.empty()) return;
  std::nth_element(over.begin(), over.begin() + over.size() / 2, over.end());
  state.counters["over_clocks_ns"] = over[over.size() / 2];
  state.SetItemsProcessed(state.iterations() * kBatch);
}

template <const char* kSink>
void BM_OverClocksRegion(benchmark::State& state) {
  // The timeline capped as in BM_RegionTimeline; the no-op sinks have no keys.
  if (std::string_view(kSink) == "timeline") {
    start(kSink, {{"max_events", "1000000"}});
  } else {
    start(kSink);
  }
  over_clocks_interleaved(state, [](int n) {
    for (int i = 0; i < n; ++i) {
      RT_REGION("bench.over_clocks");
      benchmark::ClobberMemory();
    }
  });
  regiontrace::shutdown();
}
constexpr char kTimeline[] = "timeline";
constexpr char kNoOpTimed[] = "noop_timed";
constexpr char kNoOpSpans[] = "noop_spans";
BENCHMARK_TEMPLATE(BM_OverClocksRegion, kTimeline);
BENCHMARK_TEMPLATE(BM_OverClocksRegion, kNoOpTimed);
BENCHMARK_TEMPLATE(BM_OverClocksRegion, kNoOpSpans);

// Feeds `feed` n pairs, as the plain benchmarks do one per iteration.
template <typename Feed>
void feed_over_clocks(benchmark::State& state) {
  Feed feed;
  over_clocks_interleaved(state, [&feed](int n) {
    for (int i = 0; i < n; ++i) {
      feed.pair();
      benchmark::ClobberMemory();
    }
  });
}
void BM_OverClocksTimelineCallbacks(benchmark::State& state) {
  feed_over_clocks<TimelineFeed>(state);
}
BENCHMARK(BM_OverClocksTimelineCallbacks);
void BM_OverClocksNoOpTimedCallbacks(benchmark::State& state) {
  feed_over_clocks<NoOpTimedFeed>(state);
}
BENCHMARK(BM_OverClocksNoOpTimedCallbacks);

constexpr long long kPairsPerThread = 3000000;

// Default buffer, a cap above what is recorded: every pair must be written.
// Arg: 0 = no flight recording (the trace written at shutdown only), else
// the flush interval in ms while recording.
void BM_Sustained2Threads(benchmark::State& state) {
  if (state.thread_index() == 0) {
    const std::string interval = std::to_string(state.range(0) / 1000.0);
    start("timeline",
          {{"max_events", "20000000"}, {"flight_recorder", state.range(0) > 0 ? "true" : "false"}},
          state.range(0) > 0 ? interval.c_str() : "0");
  }
  for (auto _ : state) {
    for (long long i = 0; i < kPairsPerThread; ++i) {
      RT_REGION("bench.sustained");
      benchmark::ClobberMemory();
    }
  }
  state.SetItemsProcessed(state.iterations() * kPairsPerThread);
  if (state.thread_index() == 0) {
    const std::int64_t before = regiontrace::sdk::clock::monotonic_ns();
    regiontrace::shutdown();  // formats and writes the trace
    state.counters["write_s"] = (regiontrace::sdk::clock::monotonic_ns() - before) / 1e9;
    state.counters["dropped"] = static_cast<double>(dropped_in_last_trace());
  }
}
BENCHMARK(BM_Sustained2Threads)->Arg(0)->Arg(100)->Threads(2)->UseRealTime()->Iterations(1);

}  // namespace

int main(int argc, char** argv) {
  using regiontrace::bench::Comparison;
  regiontrace::bench::prepare_anchors();  // before any NVTX call
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  regiontrace::bench::RatioReporter reporter(
      {
          {"BM_TwoClockGettime", "", 0, 0},
          {"BM_TwoClockReads", "BM_TwoClockGettime", 0, 0},
          {"BM_TwoClockReads", "BM_TwoRdtsc", 0, 0},
          {"BM_RegionNoOpTimedSink", "BM_TwoClockReads", 0, 0},
          {"BM_RegionNoOpSpansSink", "BM_TwoClockReads", 0, 0},
          {"BM_TimelineCallbacksWithClockReads", "BM_TwoClockReads", 0, 0},
          {"BM_NoOpTimedCallbacksWithClockReads", "BM_TwoClockReads", 0, 0},
          {"BM_RegionTimeline", "BM_TwoClockReads", 0, 0},
          {"BM_NvtxRawWithTool", "", 0, 0},
          {"BM_RegionTimeline", "BM_NvtxRawWithTool", 0, 0},
          {"BM_RecordUserScopeUnderProfiler/iterations:1000000", "", 0, 0},
          {"BM_RegionTimeline", "BM_RecordUserScopeUnderProfiler/iterations:1000000", 0, 0},
      },
      "BM_EmptyLoop");
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();

  const double loop = reporter.cpu_ns("BM_EmptyLoop");
  const double clocks = reporter.cpu_ns("BM_TwoClockReads") - loop;
  // Judged as what a pair costs beyond its two clock reads: the clocks are
  // the machine's, the rest is regiontrace's.
  using regiontrace::bench::print_verdict;
  using Goal = regiontrace::bench::Verdict::Goal;
  auto over_clocks = [&](const char* what, const char* name, bool judged = true) {
    const regiontrace::bench::Spread spread = reporter.counter_spread(name, "over_clocks_ns");
    if (spread.count == 0) return;
    regiontrace::bench::Verdict v;
    v.name = std::string(what) + ", over its two clock reads";
    v.min = spread.min;
    v.median = spread.median;
    if (judged) {
      v.goal = Goal::kAtMost;
      v.target = 10;
    }
    print_verdict(v);
  };
  std::printf("\n");
  print_verdict("two clock reads (SDK clock), net of the empty loop", "ns", clocks);
  std::printf(
      "Over the two clock reads: the median per-pair difference of interleaved batches\n"
      "(BM_OverClocks*), fastest and median repetition.\n");
  over_clocks("region pair, timeline sink", "BM_OverClocksRegion<kTimeline>");
  over_clocks("region pair, no-op sink with default interests", "BM_OverClocksRegion<kNoOpTimed>");
  over_clocks("no-op sink's callbacks alone (two events, two virtual calls; no host)",
              "BM_OverClocksNoOpTimedCallbacks", false);
  over_clocks("region pair, no-op span sink (the host's span path)",
              "BM_OverClocksRegion<kNoOpSpans>");
  over_clocks("timeline sink's callbacks alone (no host dispatch)",
              "BM_OverClocksTimelineCallbacks");
  const std::string sustained = "BM_Sustained2Threads/0/iterations:1/real_time/threads:2";
  const std::string flushed = "BM_Sustained2Threads/100/iterations:1/real_time/threads:2";
  const double rate = reporter.counter(sustained, "items_per_second");
  const double flushed_rate = reporter.counter(flushed, "items_per_second");
  if (rate > 0 && flushed_rate > 0) {
    // The flight recorder formats on the flush thread, beside the writer
    // and the two recording threads on what may be a 2-core machine.
    print_verdict("sustained, 2 threads, flight recorder every 100 ms", "x the rate without",
                  rate / flushed_rate, Goal::kAtMost, 1.25);
    // A flush formatting the run when shutdown comes gives up at once: the
    // trace written at shutdown replaces its file.
    print_verdict("shutdown while a flush formats", "x the shutdown without",
                  reporter.counter(flushed, "write_s") / reporter.counter(sustained, "write_s"),
                  Goal::kAtMost, 1.25);
    const double dropped = reporter.counter(flushed, "dropped");
    print_verdict(dropped < 0 ? "flushed every 100 ms: pairs dropped (trace unreadable)"
                              : "flushed every 100 ms: pairs dropped",
                  "pairs", dropped < 0 ? std::numeric_limits<double>::infinity() : dropped,
                  Goal::kAtMost, 0);
  }
  if (rate > 0) {
    print_verdict("sustained, 2 threads, default buffer", "M pairs/s", rate / 1e6, Goal::kAtLeast,
                  5);
    // An unreadable count is no proof that nothing was dropped.
    const double dropped = reporter.counter(sustained, "dropped");
    print_verdict(dropped < 0 ? "sustained, 2 threads: pairs dropped (trace unreadable)"
                              : "sustained, 2 threads: pairs dropped",
                  "pairs", dropped < 0 ? std::numeric_limits<double>::infinity() : dropped,
                  Goal::kAtMost, 0);
    std::printf("%-58s %.1f s for %lld spans\n", "  trace written at shutdown in",
                reporter.counter(sustained, "write_s"), 2 * kPairsPerThread);
  }
  return 0;
}
