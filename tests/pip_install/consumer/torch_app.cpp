// A libtorch program as users write one: regions around work, a tensor
// handed to whichever sink listens. Links RegionTrace::torch from a pip
// install and runs with the pip torch's libraries, CUDA's included.
#include <torch/torch.h>

#include <regiontrace/regiontrace.hpp>
#include <regiontrace/torch.hpp>

int main() {
  torch::manual_seed(0);
  const torch::Tensor weight = torch::randn({32, 32});
  torch::Tensor x = torch::ones({8, 32});
  for (int step = 0; step < 3; ++step) {
    regiontrace::set_step(step);
    RT_REGION("inference_denoising");
    {
      RT_REGION("blocks.0");
      x = torch::tanh(torch::mm(x, weight));
      regiontrace::observe("out", x);
    }
  }
  regiontrace::shutdown();
  return x.numel() == 256 ? 0 : 1;
}
