// A small libtorch program instrumented with the seed's regions and
// configured only through its environment, as an application is. The
// process tests run it to check what only a whole process shows: the seed's
// variables alone, normal exit, SIGTERM, ranks side by side.
//
//   workload loop <steps>          a training-like loop, then a normal exit
//   workload forever <ready_file>  stays inside a selected region, running
//                                  ops until a signal ends it; creates
//                                  <ready_file> once it is collecting
//   workload reinit <steps>        init(), a step, shutdown(), init(), the
//                                  other steps, then a normal exit
//   workload race <threads> [init] threads that enter a region at once, so
//                                  that they race through the lazy start;
//                                  then, with `init`, an explicit init()
#include <ATen/ATen.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "regiontrace/regiontrace.hpp"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr,
                 "usage: workload loop <steps> | workload forever <ready_file> | workload reinit "
                 "<steps> | workload race <threads> [init]\n");
    return 2;
  }
  const std::string mode = argv[1];
  const at::Tensor a = at::randn({32, 32});
  const at::Tensor b = at::randn({32, 32});
  if (mode == "loop") {
    const int steps = std::atoi(argv[2]);
    for (int i = 0; i < steps; ++i) {
      regiontrace::set_step(i);
      at::cos(a);  // outside every region
      {
        RT_REGION("profiler_region_training_step");
        at::mm(a, b);
        RT_REGION("profiler_region_training_backward");
        at::sin(a);
      }
      RT_REGION("profiler_region_training_validation");
      at::tan(a);
    }
    return 0;  // the trace is written at exit
  }
  if (mode == "reinit") {
    const int steps = std::atoi(argv[2]);
    for (int i = 0; i < steps; ++i) {
      if (i < 2) regiontrace::init();
      regiontrace::set_step(i);
      {
        RT_REGION("profiler_region_training_step");
        at::mm(a, b);
      }
      // The first shutdown writes the first trace; the second run's is left
      // to the exit handler.
      if (i == 0) regiontrace::shutdown();
    }
    return 0;
  }
  if (mode == "race") {
    const int n = std::atoi(argv[2]);
    std::atomic<int> ready{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < n; ++t) {
      threads.emplace_back([&] {
        ready.fetch_add(1);
        while (ready.load() < n) {
        }
        // Not through RT_REGION alone: its call-site static lets one thread
        // in and holds the others, where call sites of their own would race.
        regiontrace::region_id("profiler_region_training_step");
        RT_REGION("profiler_region_training_step");
        at::mm(a, b);
      });
    }
    for (std::thread& t : threads) t.join();
    if (argc > 3 && std::string(argv[3]) == "init") regiontrace::init();
    return 0;
  }
  if (mode == "forever") {
    RT_REGION("profiler_region_training_step");
    for (long i = 0;; ++i) {
      at::mm(a, b);
      if (i == 20) {
        if (std::FILE* f = std::fopen(argv[2], "w")) std::fclose(f);
      }
    }
  }
  return 2;
}
