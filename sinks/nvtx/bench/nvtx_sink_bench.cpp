// The nvtx sink's cost per region enter+exit, in one program, two phases:
//
// 1. No tool attached (a forked child, before any NVTX call, without
//    NVTX_INJECTION64_PATH): RT_REGION with the nvtx sink configured, against
//    raw NVTX (a no-op then) and a region with no sink at all. Target: <= 2 ns
//    per region pair.
// 2. The recording injection attached to both sides (records formatted and
//    written to /dev/null unless NVTX_RECORD_FILE says otherwise): RT_REGION
//    with the nvtx sink, and the sink's own callbacks called directly, against
//    raw nvtxDomainRangePushEx/nvtxDomainRangePop with a pre-registered
//    string, colour and int64 payload (what the sink sends). Target: <= 1.3x.
//
// Times are CPU time per iteration (these machines are shared), medians of
// repetitions, net of an empty loop. Google Benchmark flags apply to both
// phases (e.g. --benchmark_min_time=0.1).
#include <benchmark/benchmark.h>
#include <dlfcn.h>
#include <nvtx3/nvToolsExt.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "ratio_reporter.hpp"
#include "regiontrace/plugin.hpp"
#include "regiontrace/regiontrace.hpp"

namespace {

namespace bench = regiontrace::bench;

constexpr int kRepetitions = 5;
constexpr std::int64_t kStep = 7;

// --- collecting medians -------------------------------------------------------

class MedianReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) {
      if (r.run_type == Run::RT_Aggregate && r.aggregate_name == "median") {
        ns_[r.run_name.function_name] = r.GetAdjustedCPUTime();
      }
    }
    ConsoleReporter::ReportRuns(runs);
  }
  const std::map<std::string, double>& ns() const { return ns_; }

 private:
  std::map<std::string, double> ns_;
};

std::map<std::string, double> run_benchmarks() {
  MedianReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::ClearRegisteredBenchmarks();
  return reporter.ns();
}

template <typename Fn>
void add(const std::string& name, Fn fn) {
  benchmark::RegisterBenchmark(name.c_str(), fn)
      ->Repetitions(kRepetitions)
      ->ReportAggregatesOnly(true);
}

// --- the things measured ------------------------------------------------------

// Every side sends the tool the same thing (domain, registered string,
// colour, category, payload), so the tool's work per call is the same.
constexpr const char* kDomain = "bench_nvtx";
constexpr const char* kRegion = "bench.nvtx_region";
constexpr const char* kRangeName = "regiontrace.region::bench.nvtx_region";

void start_regiontrace(bool with_nvtx) {
  regiontrace::shutdown();
  regiontrace::Options o;
  o.read_environment = false;
  o.set("log_level", "warn");
  o.set("handle_signals", "false");
  o.set("output_dir", "/tmp/regiontrace_nvtx_bench");
  if (with_nvtx) o.set("sinks.nvtx.domain", kDomain);
  regiontrace::init(o);
  regiontrace::set_step(kStep);
}

void empty_loop(benchmark::State& state) {
  for (auto _ : state) benchmark::ClobberMemory();
}

void region(benchmark::State& state) {
  for (auto _ : state) {
    RT_REGION(kRegion);
    benchmark::ClobberMemory();
  }
}

// Raw NVTX as a careful hand-instrumented program would do it: a domain and
// a registered string made once, colour and payload per call.
void raw_nvtx(benchmark::State& state) {
  static nvtxDomainHandle_t domain = nvtxDomainCreateA(kDomain);
  static nvtxStringHandle_t name = nvtxDomainRegisterStringA(domain, kRangeName);
  nvtxEventAttributes_t base;
  std::memset(&base, 0, sizeof(base));
  base.version = NVTX_VERSION;
  base.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  base.colorType = NVTX_COLOR_ARGB;
  base.color = 0xFF4C72B0;
  base.category = 1;
  base.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  base.message.registered = name;
  for (auto _ : state) {
    nvtxEventAttributes_t a = base;
    a.payloadType = NVTX_PAYLOAD_TYPE_INT64;
    a.payload.llValue = kStep;
    nvtxDomainRangePushEx(domain, &a);
    nvtxDomainRangePop(domain);
    benchmark::ClobberMemory();
  }
}

// The sink's own callbacks, without the host's dispatch: built from the
// plugin file exactly as the host builds it.
regiontrace::Sink* direct_sink() {
  void* handle = dlopen(REGIONTRACE_NVTX_SINK, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) throw std::runtime_error(dlerror());
  auto descriptor = reinterpret_cast<const regiontrace::PluginDescriptor* (*)()>(
      dlsym(handle, "regiontrace_plugin_descriptor"));
  if (descriptor == nullptr) throw std::runtime_error("not a regiontrace plugin");
  static const regiontrace::HostApi host{};
  regiontrace::SinkContext ctx("nvtx", "/tmp", 0, 0, 1, static_cast<long>(getpid()), &host);
  for (const regiontrace::KeySpec& k : descriptor()->schema()) {
    ctx.set_value(k.name, {k.default_value});
  }
  ctx.set_value("domain", {kDomain});
  ctx.set_value("colors", {});
  regiontrace::Sink* sink = descriptor()->create(ctx);
  sink->on_region_routed(regiontrace::RegionInfo{1, kRegion, "", 0});
  return sink;
}

void sink_callbacks(benchmark::State& state, regiontrace::Sink* sink) {
  regiontrace::RegionEvent e;
  e.id = 1;
  e.name = kRegion;
  e.path = kRegion;
  e.step = kStep;
  e.thread_id = 1;
  for (auto _ : state) {
    sink->on_region_begin(e);
    sink->on_region_end(e);
    benchmark::ClobberMemory();
  }
}

// --- the two phases -----------------------------------------------------------

std::map<std::string, double> no_tool_phase() {
  add("empty_loop", empty_loop);
  add("no_tool/raw_nvtx", raw_nvtx);
  add("no_tool/region_no_sink", [](benchmark::State& s) {
    start_regiontrace(false);
    region(s);
  });
  add("no_tool/region_nvtx_sink", [](benchmark::State& s) {
    start_regiontrace(true);
    region(s);
    regiontrace::shutdown();
  });
  regiontrace::Sink* sink = direct_sink();
  add("no_tool/sink_callbacks", [sink](benchmark::State& s) { sink_callbacks(s, sink); });
  return run_benchmarks();
}

std::map<std::string, double> tool_phase() {
  add("empty_loop", empty_loop);
  add("tool/raw_nvtx", raw_nvtx);
  add("tool/region_nvtx_sink", [](benchmark::State& s) {
    start_regiontrace(true);
    region(s);
    regiontrace::shutdown();
  });
  regiontrace::Sink* sink = direct_sink();
  add("tool/sink_callbacks", [sink](benchmark::State& s) { sink_callbacks(s, sink); });
  return run_benchmarks();
}

// Runs the no-tool phase in a child (NVTX decides about tools once per
// process) and hands its medians back through a pipe.
std::map<std::string, double> no_tool_phase_in_child() {
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error("pipe failed");
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    unsetenv("NVTX_INJECTION64_PATH");
    std::string out;
    for (const auto& [name, ns] : no_tool_phase()) out += name + " " + std::to_string(ns) + "\n";
    std::fflush(nullptr);
    (void)!write(fds[1], out.data(), out.size());
    _exit(0);
  }
  close(fds[1]);
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = read(fds[0], buf, sizeof(buf))) > 0;)
    text.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  std::map<std::string, double> ns;
  char name[256];
  double value;
  for (const char* p = text.c_str(); std::sscanf(p, "%255s %lf", name, &value) == 2;) {
    ns[name] = value;
    p = std::strchr(p, '\n');
    if (p == nullptr) break;
    ++p;
  }
  return ns;
}

// The figures as verdict lines (bench/ratio_reporter.hpp): net ns per pair,
// judged by a ceiling or by a ratio to the raw NVTX pair.
void print_line(const char* what, double ns, double loop) {
  bench::print_verdict(what, "ns", ns - loop);
}

void print_at_most(const char* what, double ns, double loop, double target_ns) {
  bench::print_verdict(what, "ns", ns - loop, bench::Verdict::Goal::kAtMost, target_ns);
}

void print_ratio(const char* what, double ns, double raw, double loop, double target) {
  bench::print_verdict(what, "ns", ns - loop, bench::Verdict::Goal::kRatioAtMost, target,
                       "raw NVTX pair", raw - loop);
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  try {
    std::printf("== phase 1: no NVTX tool attached\n");
    const std::map<std::string, double> off = no_tool_phase_in_child();

    std::printf("\n== phase 2: the recording injection attached to both sides\n");
    setenv("NVTX_INJECTION64_PATH", REGIONTRACE_NVTX_INJECTION, 1);
    setenv("NVTX_RECORD_FILE", "/dev/null", 0);
    const std::map<std::string, double> on = tool_phase();

    const double off_loop = off.at("empty_loop");
    const double on_loop = on.at("empty_loop");
    std::printf("\nper region enter+exit, CPU time, median of %d, net of the empty loop\n",
                kRepetitions);
    print_line("no tool: raw NVTX push+pop (no-op without a tool)", off.at("no_tool/raw_nvtx"),
               off_loop);
    print_line("no tool: RT_REGION, no sink configured", off.at("no_tool/region_no_sink"),
               off_loop);
    print_at_most("no tool: RT_REGION, nvtx sink configured", off.at("no_tool/region_nvtx_sink"),
                  off_loop, 2.0);
    print_line("no tool: nvtx sink callbacks alone", off.at("no_tool/sink_callbacks"), off_loop);
    std::printf("recording tool attached (NVTX_RECORD_FILE=%s):\n",
                std::getenv("NVTX_RECORD_FILE"));
    const double raw = on.at("tool/raw_nvtx");
    print_line("tool: raw nvtxDomainRangePushEx + nvtxDomainRangePop", raw, on_loop);
    print_ratio("tool: RT_REGION, nvtx sink", on.at("tool/region_nvtx_sink"), raw, on_loop, 1.3);
    print_ratio("tool: nvtx sink callbacks alone (no host dispatch)", on.at("tool/sink_callbacks"),
                raw, on_loop, 1.3);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "regiontrace_nvtx_bench: %s\n", e.what());
    return 1;
  }
  benchmark::Shutdown();
  return 0;
}
