// `regiontrace report` on traces and memory summaries written here: each
// rank's time per region and step, the spread over ranks, the straggler, the
// memory outlier, and the three output forms.
#include <gtest/gtest.h>

#include <filesystem>

#include "cli_test_helpers.hpp"

namespace regiontrace::test {
namespace {

using nlohmann::json;

// One rank's trace by the span conventions: region spans with args.region
// and args.step, or (with_step_spans) step spans that give the step instead.
json rank_trace(int rank, const std::vector<double>& step_ms, bool with_step_spans,
                const std::string& sink = "torch_profiler") {
  json events = json::array();
  double t = 0;
  for (std::size_t step = 0; step < step_ms.size(); ++step) {
    const double us = step_ms[step] * 1000;
    json args = {{"region", "training_step"}, {"path", "training_step"}, {"depth", 0}};
    if (!with_step_spans) args["step"] = step;
    events.push_back({{"ph", "X"},
                      {"cat", "user_annotation"},
                      {"name", "regiontrace.region::training_step"},
                      {"pid", 100 + rank},
                      {"tid", 7},
                      {"ts", t + 10},
                      {"dur", us},
                      {"args", args}});
    // An op inside: ops never count as regions.
    events.push_back({{"ph", "X"},
                      {"cat", "cpu_op"},
                      {"name", "aten::mm"},
                      {"pid", 100 + rank},
                      {"tid", 7},
                      {"ts", t + 20},
                      {"dur", 5}});
    if (with_step_spans) {
      events.push_back({{"ph", "X"},
                        {"cat", "step"},
                        {"name", "ProfilerStep#" + std::to_string(step)},
                        {"pid", 100 + rank},
                        {"tid", 1000000007},
                        {"ts", t},
                        {"dur", us + 50},
                        {"args", {{"step", step}}}});
    }
    t += us + 100;
  }
  return {{"schemaVersion", 1},
          {"displayTimeUnit", "ms"},
          {"baseTimeNanoseconds", 1000},
          {"traceEvents", events},
          {"regiontrace", {{"sink", sink}, {"rank", rank}, {"world_size", 4}}}};
}

json memory_summary(int rank, std::int64_t peak) {
  return {
      {"rank", rank},
      {"pid", 100 + rank},
      {"world_size", 4},
      {"regions",
       {{{"path", "training_step"},
         {"name", "training_step"},
         {"calls", 3},
         {"devices", {{"cpu", {{"largest_growth_bytes", 0}, {"highest_peak_bytes", peak}}}}}}}}};
}

class ReportCommand : public ::testing::Test {
 protected:
  // Four ranks, three steps; rank 2 is 20 ms slower in every step, rank 3
  // gives its steps by step spans.
  void SetUp() override {
    const std::vector<std::vector<double>> ms = {
        {10, 11, 10}, {10.5, 10, 10}, {30, 31, 30.5}, {10, 10, 12}};
    for (int rank = 0; rank < 4; ++rank) {
      write_gzip(dir_.file("trace_rank" + std::to_string(rank) + ".json.gz"),
                 rank_trace(rank, ms[rank], rank == 3).dump());
    }
  }
  TempDir dir_;
};

TEST_F(ReportCommand, NamesTheStragglerWithImbalanceAndWait) {
  const json r = run_cli_json("report --json " + shell_quoted(dir_.path()), 0);
  EXPECT_EQ(r["ranks"], json::parse("[0,1,2,3]")) << r.dump(1);
  const json* region = nullptr;
  for (const auto& g : r["regions"]) {
    if (g["region"] == "training_step") region = &g;
  }
  ASSERT_NE(region, nullptr) << r.dump(1);
  const auto& steps = (*region)["steps"];
  ASSERT_EQ(steps.size(), 3u);
  // Step 0: 10, 10.5, 30, 10 ms.
  const auto& s0 = steps[0];
  EXPECT_EQ(s0["step"], 0);
  EXPECT_DOUBLE_EQ(s0["per_rank"]["2"].get<double>(), 30);
  EXPECT_DOUBLE_EQ(s0["per_rank"]["3"].get<double>(), 10);  // from its step span
  EXPECT_DOUBLE_EQ(s0["min_ms"].get<double>(), 10);
  EXPECT_DOUBLE_EQ(s0["median_ms"].get<double>(), 10.25);
  EXPECT_DOUBLE_EQ(s0["max_ms"].get<double>(), 30);
  EXPECT_EQ(s0["slowest_rank"], 2);
  EXPECT_NEAR(s0["imbalance"].get<double>(), 30 / (60.5 / 4), 1e-12);
  EXPECT_NEAR(s0["wait_ms"].get<double>(), 20 + 19.5 + 20, 1e-9);
  // Totals over the steps.
  EXPECT_NEAR((*region)["total"]["per_rank"]["2"].get<double>(), 91.5, 1e-9);
  EXPECT_NEAR((*region)["total"]["per_rank"]["0"].get<double>(), 31, 1e-9);
  // Rank 2 and no other: rank 3's 12 ms in step 2 is one step of three.
  ASSERT_EQ(r["stragglers"].size(), 1u) << r["stragglers"].dump();
  EXPECT_EQ(r["stragglers"][0]["rank"], 2);
  EXPECT_EQ(r["stragglers"][0]["region"], "training_step");
  EXPECT_EQ(r["stragglers"][0]["slow_steps"], 3);
  // The step spans of rank 3 make a "(step)" row with that rank alone.
  bool step_row = false;
  for (const auto& g : r["regions"]) step_row |= g["region"] == "(step)";
  EXPECT_TRUE(step_row);

  // Looser criteria: rank 3's 1 ms over the median in one step of three
  // makes it a straggler too.
  const json loose = run_cli_json(
      "report --json --threshold 0.05 --min-excess-ms 0.5 --share 0.3 " + shell_quoted(dir_.path()),
      0);
  std::set<int> stragglers;
  for (const auto& s : loose["stragglers"]) stragglers.insert(s["rank"].get<int>());
  EXPECT_EQ(stragglers, (std::set<int>{2, 3}));
}

TEST_F(ReportCommand, TextTablesAndHtmlWithOneSeriesPerRank) {
  const std::string html = dir_.file("report.html");
  const auto r = run_cli("report --html " + shell_quoted(html) + " " +
                         shell_quoted(dir_.file("trace_rank0.json.gz")) + " " +
                         shell_quoted(dir_.file("trace_rank1.json.gz")) + " " +
                         shell_quoted(dir_.file("trace_rank2.json.gz")) + " " +
                         shell_quoted(dir_.file("trace_rank3.json.gz")));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("Region training_step (ms per rank, 3 steps)"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("training_step: rank 2 in 3 of 3 steps"), std::string::npos) << r.output;
  const std::string page = read_file(html);
  std::size_t series = 0;
  for (std::size_t at = page.find("<g class=\"series\""); at != std::string::npos;
       at = page.find("<g class=\"series\"", at + 1)) {
    ++series;
  }
  // training_step: one series per rank; (step): rank 3 alone.
  EXPECT_EQ(series, 4u + 1u);
  for (int rank = 0; rank < 4; ++rank) {
    EXPECT_NE(page.find("data-rank=\"" + std::to_string(rank) + "\""), std::string::npos);
  }
  EXPECT_NE(page.find("class=\"straggler\" data-region=\"training_step\" data-rank=\"2\""),
            std::string::npos);
  // The per-rank plot: one column per rank, rank 2 drawn as the straggler.
  std::size_t columns = 0;
  for (std::size_t at = page.find("<g class=\"rank-column\""); at != std::string::npos;
       at = page.find("<g class=\"rank-column\"", at + 1)) {
    ++columns;
  }
  EXPECT_EQ(columns, 2u * 4u);  // training_step and (step), every rank each
  auto column = [&](int rank) {
    const auto at =
        page.find("<g class=\"rank-column\" data-rank=\"" + std::to_string(rank) + "\">");
    return at == std::string::npos ? std::string() : page.substr(at, page.find("</g>", at) - at);
  };
  EXPECT_NE(column(2).find("fill=\"#d62728\""), std::string::npos) << column(2);
  EXPECT_EQ(column(0).find("fill=\"#d62728\""), std::string::npos) << column(0);
  // No network: the only URL is SVG's namespace.
  std::size_t urls = 0;
  for (std::size_t at = page.find("http"); at != std::string::npos;
       at = page.find("http", at + 1)) {
    EXPECT_EQ(page.compare(at, 26, "http://www.w3.org/2000/svg"), 0) << page.substr(at, 40);
    ++urls;
  }
  EXPECT_GT(urls, 0u);
}

TEST_F(ReportCommand, OneTraceCountsPerRankAndMemoryPeaksAreCompared) {
  // A timeline trace of rank 0 with fewer region spans: read, not counted.
  write_file(dir_.file("timeline_rank0_pid100.json"),
             rank_trace(0, {99}, false, "timeline").dump());
  // Memory summaries: rank 1 peaks at twice the others.
  for (int rank = 0; rank < 4; ++rank) {
    write_file(dir_.file("memory_summary_rank" + std::to_string(rank) + "_pid1.json"),
               memory_summary(rank, rank == 1 ? 200 << 20 : 100 << 20).dump());
  }
  // Another output in the folder that is neither: skipped, said on stderr.
  write_file(dir_.file("region_stats_rank0_pid100.json"), "{\"regions\": {}}");
  const auto text = run_cli("report " + shell_quoted(dir_.path()));
  ASSERT_EQ(text.exit_code, 0) << text.output;
  EXPECT_NE(text.output.find("skipped"), std::string::npos) << text.output;
  EXPECT_NE(text.output.find("not counted"), std::string::npos) << text.output;
  EXPECT_NE(text.output.find("training_step on cpu: rank 1, 100.0 MiB above the median"),
            std::string::npos)
      << text.output;

  const json r = run_cli_json("report --json " + shell_quoted(dir_.path()), 0);
  for (const auto& s : r["sources"]) {
    EXPECT_EQ(s["used"], s["sink"] != "timeline") << s.dump();
  }
  ASSERT_EQ(r["memory"].size(), 1u) << r.dump(1);
  const auto& m = r["memory"][0];
  EXPECT_EQ(m["device"], "cpu");
  EXPECT_EQ(m["peaks"]["slowest_rank"], 1);
  EXPECT_DOUBLE_EQ(m["peaks"]["max_bytes"].get<double>(), 200 << 20);
  EXPECT_DOUBLE_EQ(m["peaks"]["imbalance"].get<double>(), 200.0 / 125.0);
  ASSERT_EQ(m["outliers"].size(), 1u);
  EXPECT_EQ(m["outliers"][0]["rank"], 1);
}

TEST_F(ReportCommand, BadInputNamesTheFile) {
  auto r = run_cli("report " + shell_quoted(dir_.file("absent.json")));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("absent.json: no such file or folder"), std::string::npos) << r.output;
  const std::string not_trace = dir_.file("not_a_trace.json");
  write_file(not_trace, "{\"events\": []}");
  r = run_cli("report " + shell_quoted(not_trace));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("not_a_trace.json: not a Chrome trace"), std::string::npos) << r.output;
  const std::string cut = dir_.file("cut.json");
  write_file(cut, rank_trace(0, {1, 2}, false).dump().substr(0, 200));
  r = run_cli("report " + shell_quoted(cut));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("cut.json: unexpected end of file"), std::string::npos) << r.output;
  TempDir empty;
  r = run_cli("report " + shell_quoted(empty.path()));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("no traces or memory summaries"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace regiontrace::test
