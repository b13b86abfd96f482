// The nvtx sink in a real process configured by environment variables, as
// users run it: with the recording tool attached, and with no tool at all.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace regiontrace::test {
namespace {

std::string demo() {
  return REGIONTRACE_NVTX_DEMO;
}

std::vector<nlohmann::json> sorted_records(const std::string& path) {
  std::vector<nlohmann::json> calls = read_jsonl(path);
  std::sort(calls.begin(), calls.end(), [](const auto& a, const auto& b) {
    return a["seq"].template get<std::uint64_t>() < b["seq"].template get<std::uint64_t>();
  });
  return calls;
}

TEST(NvtxProgram, RecordsEveryRangeOfAProgramConfiguredByEnvironment) {
  TempDir dir;
  const std::string records = dir.file("calls.jsonl");
  const CommandResult r = run_command(
      "env NVTX_RECORD_FILE=" + records +
      " REGIONTRACE_SINKS=nvtx REGIONTRACE_OUTPUT_DIR=" + dir.path() + " " + demo() + " 2");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::vector<nlohmann::json> calls = sorted_records(records);
  std::map<std::uint64_t, std::string> strings;
  std::map<std::string, std::vector<nlohmann::json>> pushes;
  std::map<long, int> depth;  // per thread, in the sink's domain
  long main_tid = 0;
  for (const auto& c : calls) {
    if (c["kind"] == "register_string") strings[c["string_id"]] = c["text"];
    if (c["domain"] != "regiontrace") continue;
    const long tid = c["tid"];
    if (c["kind"] == "push") {
      EXPECT_EQ(c["message_type"], "registered");
      pushes[strings.at(c["string_id"])].push_back(c);
      EXPECT_EQ(c["depth"], depth[tid]++);
    } else if (c["kind"] == "pop") {
      EXPECT_EQ(c["depth"], --depth[tid]);
    }
  }
  for (const auto& [tid, d] : depth) EXPECT_EQ(d, 0) << "thread " << tid << " left ranges open";

  const auto& loading = pushes["regiontrace.region::profiler_region_model_loading"];
  ASSERT_EQ(loading.size(), 1u);
  main_tid = loading[0]["tid"];
  const auto& steps = pushes["regiontrace.region::profiler_region_training_step"];
  ASSERT_EQ(steps.size(), 2u);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(steps[i]["payload"], i);
    EXPECT_EQ(steps[i]["tid"], main_tid);
  }
  EXPECT_EQ(pushes["regiontrace.region::forward"].size(), 2u);
  EXPECT_EQ(pushes["regiontrace.region::backward"].size(), 2u);
  const auto& data = pushes["regiontrace.region::data_loading"];
  ASSERT_EQ(data.size(), 2u);
  EXPECT_NE(data[0]["tid"], main_tid) << "the loader thread's ranges are on the loader thread";

  // The program's own NVTX range, in NVTX's default domain, recorded too.
  bool raw = false;
  for (const auto& c : calls) {
    if (c["kind"] == "push" && c["domain_id"] == 0 && c["message"] == "demo.raw_nvtx") raw = true;
  }
  EXPECT_TRUE(raw);
}

TEST(NvtxProgram, WithoutAToolTheSinkSaysSoAndTheProgramRuns) {
  TempDir dir;
  const CommandResult r = run_command(
      "env -u NVTX_INJECTION64_PATH REGIONTRACE_SINKS=nvtx REGIONTRACE_LOG_LEVEL=info "
      "REGIONTRACE_OUTPUT_DIR=" +
      dir.path() + " " + demo() + " 1 3");
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find("no NVTX tool attached"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace regiontrace::test
