// Instructions per iteration of the configurations the bench times, for
// callgrind, whose counts do not depend on the machine's load:
//
//   valgrind --tool=callgrind --toggle-collect=measured_loop \
//     build/bin/regiontrace_torch_profiler_instructions <config> <n> [size]
//
// for n = 1000 and n = 2000; (total(2000) - total(1000)) / 1000 is the cost
// of one iteration, the start-up and the 50 warm-up iterations cancelling
// out. Configurations: alone, bare (under libtorch's profiler as the sink
// starts it), sink (each op in a selected region), inregion (all ops in one
// selected region), outside (outside selected regions, window live), empty
// (a selected region with nothing inside).
// size: the matmul's (default 4: libtorch's own work small, the same four
// aten ops as 32x32). See README.md.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/csrc/autograd/profiler_kineto.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>

#include "regiontrace/regiontrace.hpp"

namespace {

RT_DECLARE_REGION(kSelected, "bench_selected", "selected by the sink in this driver");

enum class Config { kAlone, kBare, kSink, kInRegion, kOutside, kEmpty };
Config g_config = Config::kAlone;
at::Tensor g_operand;

}  // namespace

// Not inlined, and with C linkage: callgrind's --toggle-collect names it.
extern "C" __attribute__((noinline)) void measured_loop(int n) {
  if (g_config == Config::kInRegion) {
    // One region around them all: its own cost cancels between two runs.
    RT_REGION("bench_selected");
    for (int i = 0; i < n; ++i) at::mm(g_operand, g_operand);
    return;
  }
  for (int i = 0; i < n; ++i) {
    switch (g_config) {
      case Config::kSink: {
        RT_REGION("bench_selected");
        at::mm(g_operand, g_operand);
        break;
      }
      case Config::kEmpty: {
        RT_REGION("bench_selected");
        asm volatile("" ::: "memory");
        break;
      }
      default:
        at::mm(g_operand, g_operand);
        break;
    }
  }
}

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s alone|bare|sink|inregion|outside|empty <iterations> [size]\n", argv[0]);
    return 2;
  }
  const std::string config = argv[1];
  if (config == "alone") {
    g_config = Config::kAlone;
  } else if (config == "bare") {
    g_config = Config::kBare;
  } else if (config == "sink") {
    g_config = Config::kSink;
  } else if (config == "inregion") {
    g_config = Config::kInRegion;
  } else if (config == "outside") {
    g_config = Config::kOutside;
  } else if (config == "empty") {
    g_config = Config::kEmpty;
  } else {
    std::fprintf(stderr, "unknown configuration '%s'\n", config.c_str());
    return 2;
  }
  const int n = std::atoi(argv[2]);
  const int size = argc > 3 ? std::atoi(argv[3]) : 4;
  at::set_num_threads(1);
  g_operand = at::randn({size, size});
  namespace prof = torch::autograd::profiler;
  const prof::ProfilerConfig profiler(prof::ProfilerState::KINETO);
  const std::set<prof::ActivityType> cpu{prof::ActivityType::CPU};
  const bool sink = g_config != Config::kAlone && g_config != Config::kBare;
  if (g_config == Config::kBare) {
    prof::prepareProfiler(profiler, cpu);
    prof::enableProfiler(profiler, cpu);
  }
  if (sink) {
    const auto dir = std::filesystem::temp_directory_path() / "regiontrace_tp_instructions";
    std::filesystem::create_directories(dir);
    regiontrace::Options o;
    o.read_environment = false;
    o.set("output_dir", dir.string());
    o.set("log_level", "warn");
    o.set("sinks.torch_profiler.regions", "bench_selected");
    o.set("sinks.torch_profiler.gzip", "false");
    o.set("sinks.torch_profiler.keep_last", "1");
    regiontrace::init(o);
    { RT_REGION("bench_selected"); }  // starts the window, as in the bench
  }
  measured_loop(50);  // warm-up
  measured_loop(n);
  if (g_config == Config::kBare) prof::disableProfiler();
  if (sink) regiontrace::shutdown();
  return 0;
}
