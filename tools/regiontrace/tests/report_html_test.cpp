// The page of `regiontrace report --html`, read back as text: the overview's
// bars stacked by each region's own time and adding up to the step, per-rank
// columns, closed sections, one colour per rank and a straggler mark in none
// of them, profiled steps, and memory over time from counter tracks.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "cli_test_helpers.hpp"

namespace regiontrace::test {
namespace {

using nlohmann::json;

json complete(const std::string& name, const std::string& cat, int pid, double ts_ms,
              double dur_ms) {
  return {{"ph", "X"}, {"cat", cat},         {"name", name},        {"pid", pid},
          {"tid", 7},  {"ts", ts_ms * 1000}, {"dur", dur_ms * 1000}};
}

json region_span(const std::string& region, int pid, double ts_ms, double dur_ms, int step) {
  json e = complete("regiontrace.region::" + region, "user_annotation", pid, ts_ms, dur_ms);
  e["args"] = {{"region", region}, {"path", region}, {"step", step}};
  return e;
}

json step_span(int step, int pid, double ts_ms, double dur_ms) {
  json e = complete("ProfilerStep#" + std::to_string(step), "user_annotation", pid, ts_ms, dur_ms);
  e["tid"] = 1000000007;
  e["args"] = {{"step", step}};
  return e;
}

json counter(const std::string& name, int pid, double ts_ms, const json& args) {
  return {{"ph", "C"}, {"name", name},       {"pid", pid},
          {"tid", 0},  {"ts", ts_ms * 1000}, {"args", args}};
}

json trace_of(int rank, const json& events, const std::string& sink = "torch_profiler") {
  return {{"traceEvents", events}, {"regiontrace", {{"sink", sink}, {"rank", rank}}}};
}

// Every element of the page that starts with `open`, up to `close`.
std::vector<std::string> elements(const std::string& page, const std::string& open,
                                  const std::string& close) {
  std::vector<std::string> out;
  for (auto at = page.find(open); at != std::string::npos; at = page.find(open, at + 1)) {
    const auto end = page.find(close, at);
    out.push_back(page.substr(at, end == std::string::npos ? std::string::npos : end - at));
  }
  return out;
}

// The values of attribute `name` in `text`, in order.
std::vector<std::string> attributes(const std::string& text, const std::string& name) {
  std::vector<std::string> out;
  const std::string key = " " + name + "=\"";
  for (auto at = text.find(key); at != std::string::npos; at = text.find(key, at + 1)) {
    const auto from = at + key.size();
    out.push_back(text.substr(from, text.find('"', from) - from));
  }
  return out;
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

std::string report_page(const TempDir& dir) {
  const std::string html = dir.file("report.html");
  const auto r = run_cli("report --html " + shell_quoted(html) + " " + shell_quoted(dir.path()));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return read_file(html);
}

// Three ranks, two steps of 100 ms each (step spans). In each step `outer`
// runs 10-90 ms and holds `inner` for 20-50 ms; rank 2's inner takes 60 ms
// (20-80). Rank 1's profiler collected step 1 only.
class ReportHtml : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int rank = 0; rank < 3; ++rank) {
      const int pid = 100 + rank;
      json events = json::array();
      for (int step = 0; step < 2; ++step) {
        const double t = step * 100.0;
        events.push_back(step_span(step, pid, t, 100));
        events.push_back(region_span("outer", pid, t + 10, 80, step));
        events.push_back(region_span("inner", pid, t + 20, rank == 2 ? 60 : 30, step));
      }
      json trace = trace_of(rank, events);
      if (rank == 1) trace["regiontrace"]["steps"] = {{"first", 1}, {"last", 1}};
      write_file(dir_.file("trace_rank" + std::to_string(rank) + ".json"), trace.dump());
    }
    page_ = report_page(dir_);
  }
  TempDir dir_;
  std::string page_;
};

TEST_F(ReportHtml, BarsStackEachRegionsOwnTimeAndAddUpToTheStep) {
  const auto bars = elements(page_, "<g class=\"bar\"", "</g>");
  ASSERT_EQ(bars.size(), 6u) << page_;  // 2 steps x 3 ranks
  for (const auto& bar : bars) {
    const std::string rank = attributes(bar, "data-rank").at(0);
    std::map<std::string, double> ms;
    double sum = 0;
    const auto regions = attributes(bar, "data-region");
    const auto values = attributes(bar, "data-ms");
    ASSERT_EQ(regions.size(), values.size()) << bar;
    for (std::size_t i = 0; i < regions.size(); ++i) {
      ms[regions[i]] = std::stod(values[i]);
      sum += std::stod(values[i]);
    }
    // The step's 100 ms: outer's own 80 - inner, inner, and 20 outside.
    EXPECT_NEAR(sum, 100, 1e-6) << bar;
    const double inner = rank == "2" ? 60 : 30;
    EXPECT_NEAR(ms["inner"], inner, 1e-6) << bar;
    EXPECT_NEAR(ms["outer"], 80 - inner, 1e-6) << bar;
    EXPECT_NEAR(ms["(outside regions)"], 20, 1e-6) << bar;
    // Heights follow the values: one scale for the whole chart.
    double height = 0;
    for (const auto& rect : elements(bar, "<rect", ">")) {
      if (rect.find("class=\"segment\"") != std::string::npos) {
        height += std::stod(attributes(rect, "height").at(0));
      }
    }
    EXPECT_NEAR(height, 220, 0.05) << bar;  // every bar is the tallest
  }
}

TEST_F(ReportHtml, OneColourPerRankAndTheStragglerMarkInNoneOfThem) {
  // The colour each rank is drawn in, from the legend, the bars' keys, the
  // region plots' lines and the table headers.
  std::map<std::string, std::set<std::string>> colours;
  for (const auto& li : elements(page_, "<li class=\"rank\"", "</li>")) {
    colours[attributes(li, "data-rank").at(0)].insert(li.substr(li.find("background:") + 11, 7));
  }
  for (const auto& key : elements(page_, "<rect class=\"rank-key\"", "/>")) {
    colours[attributes(key, "data-rank").at(0)].insert(attributes(key, "fill").at(0));
  }
  for (const auto& g : elements(page_, "<g class=\"series\"", "</g>")) {
    colours[attributes(g, "data-rank").at(0)].insert(attributes(g, "stroke").at(0));
  }
  for (const auto& th : elements(page_, "<th class=\"rank\"", "</th>")) {
    colours[attributes(th, "data-rank").at(0)].insert(th.substr(th.find("background:") + 11, 7));
  }
  ASSERT_EQ(colours.size(), 3u);
  std::set<std::string> all;
  for (const auto& [rank, set] : colours) {
    EXPECT_EQ(set.size(), 1u) << "rank " << rank << " in several colours";
    all.insert(*set.begin());
  }
  EXPECT_EQ(all.size(), 3u) << "ranks share a colour";
  // Rank 2 is the straggler in inner (outer takes 80 ms on every rank);
  // its marks are black.
  const auto marks = elements(page_, "class=\"straggler-mark\"", ">");
  ASSERT_FALSE(marks.empty()) << page_;
  for (const auto& m : marks) {
    for (const auto& ink : attributes(" " + m, "fill")) {
      EXPECT_TRUE(ink == "none" || all.count(ink) == 0) << m;
    }
    for (const auto& ink : attributes(" " + m, "stroke")) EXPECT_EQ(all.count(ink), 0u) << m;
  }
  for (const auto& bar : elements(page_, "<g class=\"bar\"", "</g>")) {
    const bool marked = bar.find("straggler-mark") != std::string::npos;
    EXPECT_EQ(marked, attributes(bar, "data-rank").at(0) == "2") << bar;
  }
}

TEST_F(ReportHtml, OverviewFirstSectionsClosedPerRankColumnsProfiledSteps) {
  // The summary and the overview before any section; every section closed.
  const auto overview = page_.find("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"overview\"");
  ASSERT_NE(overview, std::string::npos);
  EXPECT_LT(page_.find("<p class=\"summary\">3 ranks, 2 steps (1 profiled)"), overview) << page_;
  EXPECT_LT(overview, page_.find("<details"));
  EXPECT_EQ(page_.find("<details open"), std::string::npos);
  // A section per region ((step), outer, inner) and the inputs.
  EXPECT_EQ(count(page_, "<details class=\"region\""), 3u);
  EXPECT_EQ(count(page_, "<details class=\"inputs\""), 1u);
  // Per-rank columns: a header per rank, a cell per rank in each row.
  const auto tables = elements(page_, "<table class=\"steps\" data-region=\"inner\"", "</table>");
  ASSERT_EQ(tables.size(), 1u);
  const auto rows = elements(tables[0], "<tr>", "</tr>");
  ASSERT_EQ(rows.size(), 4u);  // header, 2 steps, all
  EXPECT_EQ(count(rows[0], "<th class=\"rank\""), 3u) << rows[0];
  for (std::size_t i = 1; i < rows.size(); ++i) {
    EXPECT_EQ(count(rows[i], "<td"), 1u + 3u + 6u) << rows[i];
  }
  EXPECT_NE(rows[1].find("<td>30.000</td><td>30.000</td><td>60.000</td>"), std::string::npos)
      << rows[1];
  // Rank 1's step 1 is shaded, nothing else is.
  EXPECT_EQ(count(rows[1], "class=\"profiled\""), 0u) << rows[1];
  EXPECT_NE(rows[2].find("<td>30.000</td><td class=\"profiled\">30.000</td><td>60.000</td>"),
            std::string::npos)
      << rows[2];
  EXPECT_EQ(count(rows[3], "class=\"profiled\""), 0u) << rows[3];
  // On the bars: rank 1 in step 1.
  for (const auto& bar : elements(page_, "<g class=\"bar\"", "</g>")) {
    const bool profiled = bar.find("profiled-mark") != std::string::npos;
    EXPECT_EQ(profiled, attributes(bar, "data-rank").at(0) == "1" &&
                            attributes(bar, "data-step").at(0) == "1")
        << bar;
  }
}

// Memory traces' counter tracks, drawn as lines over time: a rank each,
// bounded in points, its highest sample kept.
TEST(ReportHtmlMemory, CountersAreDrawnOverTimeWithTheirPeaks) {
  TempDir dir;
  for (int rank = 0; rank < 2; ++rank) {
    const int pid = 100 + rank;
    json events = json::array();
    events.push_back(region_span("step", pid, 0, 5000, 0));
    // 5000 samples, written out of time order as memory traces do; a peak
    // of 300 MiB on rank 1 at 2.5 s.
    for (int i = 4999; i >= 0; --i) {
      const double mib = 100 + (i % 10) + (rank == 1 && i == 2500 ? 200 : 0);
      events.push_back(counter("libtorch allocated bytes", pid, i,
                               {{"cpu", static_cast<std::int64_t>(mib * 1048576)}}));
    }
    write_file(dir.file("memory_trace_rank" + std::to_string(rank) + "_pid1.json"),
               trace_of(rank, events, "memory_snapshot").dump());
  }
  const std::string page = report_page(dir);
  const auto plots = elements(
      page,
      "class=\"memory-plot\" width=\"640\" height=\"240\" data-counter=\"libtorch allocated "
      "bytes (cpu)\"",
      "</svg>");
  ASSERT_EQ(plots.size(), 1u) << page;
  const auto series = elements(plots[0], "<g class=\"counter-series\"", "</g>");
  ASSERT_EQ(series.size(), 2u);
  for (const auto& s : series) {
    const std::string points = attributes(s, "points").at(0);
    const std::size_t n = count(points, ",");
    EXPECT_GT(n, 100u);
    EXPECT_LE(n, 512u);
  }
  EXPECT_NE(series[1].find("rank 1: highest 300.0 MiB"), std::string::npos) << series[1];
  EXPECT_NE(series[0].find("rank 0: highest 109.0 MiB"), std::string::npos) << series[0];
  const auto memory = page.find("<details class=\"memory\"");
  ASSERT_NE(memory, std::string::npos);
  EXPECT_LT(memory, page.find("class=\"memory-plot\""));
}

TEST(ReportHtmlWords, OneRankIsOneRank) {
  TempDir dir;
  write_file(dir.file("trace_rank0.json"),
             trace_of(0, json::array({region_span("a", 100, 0, 10, 0)})).dump());
  const std::string page = report_page(dir);
  EXPECT_NE(page.find("<p class=\"summary\">1 rank, 1 step;"), std::string::npos) << page;
}

}  // namespace
}  // namespace regiontrace::test
