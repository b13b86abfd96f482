// The nvtx sink and the torch_profiler sink in one process, fed by the same
// regions: Nsight's ranges and Perfetto's spans carry the same names.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "nvtx_records.hpp"
#include "regiontrace/regiontrace.hpp"
#include "test_support.hpp"

namespace regiontrace::test {
namespace {

#if defined(REGIONTRACE_NVTX_WITH_TORCH_PROFILER)
constexpr bool kHaveTorchProfiler = true;
#else
constexpr bool kHaveTorchProfiler = false;
#endif

TEST(NvtxWithTorchProfiler, BothSinksSeeTheSameRegions) {
  if (!kHaveTorchProfiler) GTEST_SKIP() << "the torch_profiler sink is not part of this build";
  CleanEnv env;
  TempDir dir;
  Options o;
  o.read_environment = false;
  o.set("output_dir", dir.path());
  o.set("sinks.nvtx.domain", "t_with_torch");
  o.set("sinks.torch_profiler.enabled", "true");
  o.set("sinks.torch_profiler.output_dir", dir.path());
  init(o);
  for (int step = 0; step < 2; ++step) {
    set_step(step);
    RT_REGION("nvtx_t.together");
  }
  shutdown();

  std::vector<std::string> script;
  const nvtx::Calls calls = nvtx::calls_in_domain("t_with_torch");
  for (const auto& c : nvtx::ranges(calls)) {
    script.push_back(c["kind"] == "push" ? nvtx::registered_text(calls, c) : "pop");
  }
  EXPECT_EQ(script, (std::vector<std::string>{"regiontrace.region::nvtx_t.together", "pop",
                                              "regiontrace.region::nvtx_t.together", "pop"}));

  // The profiler's trace has spans of the same name.
  int spans = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir.path())) {
    const std::string f = entry.path().string();
    if (f.size() < 8 || f.compare(f.size() - 8, 8, ".json.gz") != 0) continue;
    const CommandResult r = run_command("gzip -dc '" + f + "'");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const nlohmann::json trace = nlohmann::json::parse(r.output);
    for (const auto& e : trace.at("traceEvents")) {
      if (e.value("name", "") == "regiontrace.region::nvtx_t.together") ++spans;
    }
  }
  EXPECT_GE(spans, 2) << "no `regiontrace.region::nvtx_t.together` spans in " << dir.path();
}

}  // namespace
}  // namespace regiontrace::test
