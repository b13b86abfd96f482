// The torch_profiler sink with CUDA activities: kernels are collected only
// inside the selected region, carry their device and stream, and lie within
// the region span that launched them.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "cuda_skip.hpp"
#include "regiontrace/regiontrace.hpp"
#include "test_support.hpp"
#include "trace_reading.hpp"

namespace regiontrace {
namespace {

using nlohmann::json;
using test::CleanEnv;
using test::TempDir;
namespace tp = torch_profiler::test;

RT_DECLARE_REGION(kGpuWork, "gpu_work", "CUDA kernels collected by the torch_profiler sink");

bool is_kernel(const json& e) {
  return e.value("ph", "") == "X" && e.value("cat", "") == "kernel";
}

TEST(CudaProfiler, KernelsCarryDeviceAndStreamAndLieInsideTheirRegion) {
  REGIONTRACE_REQUIRE_CUDA();
  CleanEnv env;
  TempDir dir;
  Options o;
  o.read_environment = false;
  o.set("output_dir", dir.path());
  o.set("log_level", "warn");
  o.set("handle_signals", "false");
  o.set("sinks.torch_profiler.enabled", "true");
  o.set("sinks.torch_profiler.regions", "gpu_work");
  o.set("sinks.torch_profiler.activities", "cpu,cuda");
  o.set("sinks.torch_profiler.gzip", "true");
  init(o);
  const at::Tensor a = at::randn({1024, 1024}, at::TensorOptions().device(at::kCUDA));
  a.sum().item<float>();  // the set-up kernels end before the first region
  for (int i = 0; i < 3; ++i) {
    Region r(kGpuWork);
    at::Tensor b = at::mm(a, a).relu_();
    b.sum().item<float>();  // waits for the kernels inside the region
  }
  at::mm(a, a).sum().item<float>();  // outside: must not be collected
  shutdown();

  const std::vector<std::string> files = tp::trace_files(dir.path());
  ASSERT_EQ(files.size(), 1u);
  const json trace = tp::load_trace(files[0]);
  const std::vector<json> spans = tp::region_spans(trace);
  ASSERT_EQ(spans.size(), 3u);
  std::size_t kernels = 0;
  for (const json& e : trace.at("traceEvents")) {
    if (!is_kernel(e)) continue;
    ++kernels;
    ASSERT_TRUE(e.contains("args")) << e.dump();
    EXPECT_TRUE(e.at("args").contains("device")) << e.dump();
    EXPECT_TRUE(e.at("args").contains("stream")) << e.dump();
    const double start = tp::ts(e), stop = tp::end(e);
    const bool inside = std::any_of(spans.begin(), spans.end(), [&](const json& s) {
      return start >= tp::ts(s) - 1.0 && stop <= tp::end(s) + 1.0;
    });
    EXPECT_TRUE(inside) << "kernel outside every gpu_work span: " << e.dump();
  }
  // mm, relu and sum in each of three regions; none of the last mm.
  EXPECT_GE(kernels, 9u);
}

}  // namespace
}  // namespace regiontrace
