// A small instrumented program, configured only by its environment like a
// user's: model loading, a data-loading thread, training steps with forward
// and backward, a mark, and one NVTX range of its own (nvtx3, default
// domain). The sink's process tests and regiontrace-nvtx-record's tests run
// it. Usage: regiontrace_nvtx_demo [steps=3] [exit_code=0]
#include <nvtx3/nvtx3.hpp>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "regiontrace/regiontrace.hpp"

namespace {

void work(int ms) {
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

}  // namespace

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 3;
  const int exit_code = argc > 2 ? std::atoi(argv[2]) : 0;
  {
    RT_REGION("model_loading");
    work(2);
  }
  std::thread loader([steps] {
    for (int i = 0; i < steps; ++i) {
      RT_REGION("data_loading");
      work(1);
    }
  });
  for (int step = 0; step < steps; ++step) {
    regiontrace::set_step(step);
    RT_REGION("training_step");
    {
      RT_REGION("forward");
      work(2);
    }
    {
      RT_REGION("backward");
      work(3);
    }
  }
  loader.join();
  regiontrace::mark("done");
  {
    nvtx3::scoped_range raw{"demo.raw_nvtx"};
    work(1);
  }
  return exit_code;
}
