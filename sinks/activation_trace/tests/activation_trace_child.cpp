// A program the tests start as a child process: a denoising-style loop of
// regions and observed tensors, configured only by its environment
// (REGIONTRACE_* or FASTVIDEO_TRACE_*). `activation_trace_child <steps>`
// runs that many steps and exits; a negative count runs until a signal.
#include <ATen/ATen.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "regiontrace/regiontrace.hpp"
#include "regiontrace/torch.hpp"

int main(int argc, char** argv) {
  const long steps = argc > 1 ? std::strtol(argv[1], nullptr, 10) : 3;
  at::manual_seed(0);
  at::Tensor h = at::randn({64, 256});
  const at::Tensor w = at::randn({256, 256}) * 0.05;
  bool announced = false;
  for (long step = 0; steps < 0 || step < steps; ++step) {
    regiontrace::set_step(step);
    RT_REGION("denoise");
    for (int b = 0; b < 4; ++b) {
      const regiontrace::Region block("blocks." + std::to_string(b));
      h = at::tanh(at::matmul(h, w));
      regiontrace::observe("out", h);
    }
    if (!announced) {
      std::printf("running\n");  // the parent may signal from now on
      std::fflush(stdout);
      announced = true;
    }
  }
  return 0;
}
