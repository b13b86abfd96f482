// regiontrace-nvtx-record as users run it: on an instrumented program, with
// its reports read back (JSON with a real parser, text by lines).
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace regiontrace::test {
namespace {

using nlohmann::json;

const std::string kTool = REGIONTRACE_NVTX_RECORD_TOOL;
const std::string kDemo = REGIONTRACE_NVTX_DEMO;

// The demo program with the nvtx sink switched on by environment, writing
// regiontrace's own files into `dir`.
std::string demo_command(const TempDir& dir, const std::string& args) {
  return "env REGIONTRACE_SINKS=nvtx REGIONTRACE_OUTPUT_DIR=" + dir.path() + " " + kDemo + " " +
         args;
}

const json& child_named(const json& nodes, const std::string& name) {
  for (const json& n : nodes) {
    if (n.at("name") == name) return n;
  }
  throw std::runtime_error("no `" + name + "` in " + nodes.dump());
}

std::vector<std::string> names(const json& nodes) {
  std::vector<std::string> out;
  for (const json& n : nodes) out.push_back(n.at("name"));
  return out;
}

// The domain `domain` of the thread whose tree has a top-level `range`.
const json& domain_with(const json& report, const std::string& domain, const std::string& range) {
  for (const json& p : report.at("processes")) {
    for (const json& t : p.at("threads")) {
      for (const json& d : t.at("domains")) {
        if (d.at("domain") != domain) continue;
        for (const json& r : d.at("ranges")) {
          if (r.at("name") == range) return d;
        }
      }
    }
  }
  throw std::runtime_error("no thread with `" + range + "` in domain `" + domain + "`");
}

TEST(NvtxRecordTool, PrintsTheRangeTreeWithDurationsAsJson) {
  TempDir dir;
  const CommandResult r = run_command(kTool + " --format json --report " + dir.file("tree.json") +
                                      " -- " + demo_command(dir, "3"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json report = read_json(dir.file("tree.json"));
  ASSERT_EQ(report.at("processes").size(), 1u);
  EXPECT_EQ(report.at("malformed_lines"), 0);

  const json& main =
      domain_with(report, "regiontrace", "regiontrace.region::profiler_region_training_step");
  EXPECT_EQ(names(main.at("ranges")),
            (std::vector<std::string>{
                "regiontrace.region::profiler_region_model_loading", "regiontrace.step",
                "regiontrace.region::profiler_region_training_step", "regiontrace.mark::done"}));
  EXPECT_EQ(main.at("unmatched_pops"), 0);
  const json& step_marks = child_named(main.at("ranges"), "regiontrace.step");
  EXPECT_EQ(step_marks.at("kind"), "mark");
  EXPECT_EQ(step_marks.at("count"), 3);

  const json& step =
      child_named(main.at("ranges"), "regiontrace.region::profiler_region_training_step");
  EXPECT_EQ(step.at("count"), 3);
  EXPECT_EQ(step.at("open"), 0);
  const json& forward = child_named(step.at("children"), "regiontrace.region::forward");
  const json& backward = child_named(step.at("children"), "regiontrace.region::backward");
  EXPECT_EQ(forward.at("count"), 3);
  EXPECT_EQ(backward.at("count"), 3);
  // The demo sleeps 2 ms in forward and 3 ms in backward.
  EXPECT_GE(forward.at("min_ns").get<long>(), 2000000);
  EXPECT_GE(backward.at("min_ns").get<long>(), 3000000);
  EXPECT_GE(step.at("total_ns").get<long>(),
            forward.at("total_ns").get<long>() + backward.at("total_ns").get<long>());
  EXPECT_LE(forward.at("min_ns").get<long>(), forward.at("avg_ns").get<long>());
  EXPECT_LE(forward.at("avg_ns").get<long>(), forward.at("max_ns").get<long>());

  const json& loader = domain_with(report, "regiontrace", "regiontrace.region::data_loading");
  EXPECT_EQ(names(loader.at("ranges")),
            (std::vector<std::string>{"regiontrace.region::data_loading"}));
  EXPECT_EQ(loader.at("ranges").at(0).at("count"), 3);
  EXPECT_NE(&loader, &main);

  const json& raw = domain_with(report, "", "demo.raw_nvtx");
  EXPECT_EQ(raw.at("ranges").at(0).at("count"), 1);
}

TEST(NvtxRecordTool, PrintsAnIndentedTextTreeByDefault) {
  TempDir dir;
  const CommandResult r = run_command(kTool + " -- " + demo_command(dir, "2") + " 2>/dev/null");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::istringstream lines(r.output);
  std::string line;
  bool header = false, step = false, forward = false;
  while (std::getline(lines, line)) {
    if (line.find("domain \"regiontrace\"") != std::string::npos) header = true;
    if (line.rfind("  regiontrace.region::profiler_region_training_step ", 0) == 0) {
      step = true;
      std::istringstream cols(line);
      std::string name, count;
      cols >> name >> count;
      EXPECT_EQ(count, "2") << line;
    }
    if (line.rfind("    regiontrace.region::forward ", 0) == 0) {
      forward = true;
      EXPECT_NE(line.find(" ms"), std::string::npos) << line;
    }
  }
  EXPECT_TRUE(header && step && forward) << r.output;
}

TEST(NvtxRecordTool, KeepsTheCallsAndReportsThemAgainFromTheFile) {
  TempDir dir;
  const std::string calls = dir.file("calls.jsonl");
  const CommandResult r = run_command(kTool + " -o " + calls + " --format json --report " +
                                      dir.file("first.json") + " -- " + demo_command(dir, "1"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::vector<json> lines = read_jsonl(calls);
  ASSERT_FALSE(lines.empty());
  for (const json& l : lines) {
    EXPECT_TRUE(l.contains("seq") && l.contains("kind") && l.contains("domain")) << l.dump();
  }
  const CommandResult again =
      run_command(kTool + " --from " + calls + " --format json --report " + dir.file("again.json"));
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_EQ(read_json(dir.file("again.json")), read_json(dir.file("first.json")));
}

TEST(NvtxRecordTool, DomainOptionKeepsOnlyThoseDomains) {
  TempDir dir;
  const CommandResult r = run_command(kTool + " --domain '' --format json --report " +
                                      dir.file("tree.json") + " -- " + demo_command(dir, "1"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json report = read_json(dir.file("tree.json"));
  for (const json& p : report.at("processes")) {
    for (const json& t : p.at("threads")) {
      for (const json& d : t.at("domains")) EXPECT_EQ(d.at("domain"), "");
    }
  }
  EXPECT_NO_THROW(domain_with(report, "", "demo.raw_nvtx"));
}

TEST(NvtxRecordTool, RecordsEveryProcessTheCommandStarts) {
  TempDir dir;
  const std::string demo = demo_command(dir, "1");
  const CommandResult r = run_command(kTool + " --format json --report " + dir.file("tree.json") +
                                      " -- sh -c '" + demo + " & " + demo + "; wait'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json report = read_json(dir.file("tree.json"));
  ASSERT_EQ(report.at("processes").size(), 2u);
  EXPECT_NE(report["processes"][0]["pid"], report["processes"][1]["pid"]);
  for (const json& p : report.at("processes")) {
    int steps = 0;
    for (const json& t : p.at("threads")) {
      for (const json& d : t.at("domains")) {
        for (const json& n : d.at("ranges")) {
          if (n.at("name") == "regiontrace.region::profiler_region_training_step") {
            steps += n.at("count").get<int>();
          }
        }
      }
    }
    EXPECT_EQ(steps, 1) << p.dump();
  }
}

TEST(NvtxRecordTool, ExitsWithTheCommandsExitCodeOrSignal) {
  TempDir dir;
  EXPECT_EQ(run_command(kTool + " -- " + demo_command(dir, "1 5")).exit_code, 5);
  EXPECT_EQ(run_command(kTool + " -- sh -c 'kill -TERM $$'").exit_code, 128 + 15);
  const CommandResult missing = run_command(kTool + " -- /nonexistent/program");
  EXPECT_EQ(missing.exit_code, 127);
  EXPECT_NE(missing.output.find("cannot run `/nonexistent/program`"), std::string::npos)
      << missing.output;
}

TEST(NvtxRecordTool, SaysSoWhenNothingWasRecorded) {
  const CommandResult r = run_command(kTool + " -- true");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.output.find("no NVTX ranges or marks were recorded"), std::string::npos) << r.output;
}

TEST(NvtxRecordTool, RefusesAMissingCommandOrInjection) {
  EXPECT_EQ(run_command(kTool).exit_code, 2);
  const CommandResult r = run_command(kTool + " --injection /nonexistent.so -- true");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("/nonexistent.so"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace regiontrace::test
