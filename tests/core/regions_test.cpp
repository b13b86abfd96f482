// Region API behaviour as a sink sees it: order, nesting, paths, steps,
// exceptions, tokens, marks.
#include <gtest/gtest.h>

#include <stdexcept>

#include "recorded_events.hpp"
#include "regiontrace/regiontrace.hpp"
#include "test_support.hpp"

namespace regiontrace::test {
namespace {

class RegionsTest : public ::testing::Test {
 protected:
  void start(std::map<std::string, std::string> extra = {}) {
    init(recorder_options(file_, std::move(extra)));
  }
  std::vector<nlohmann::json> finish() {
    shutdown();
    return read_jsonl(file_);
  }
  CleanEnv env_;
  TempDir dir_;
  std::string file_ = dir_.file("events.jsonl");
};

TEST_F(RegionsTest, NestedRegionsArriveInOrderWithPathsAndDepths) {
  start();
  {
    RT_REGION("outer");
    {
      RT_REGION("middle");
      RT_REGION("inner");
    }
  }
  const auto events = finish();
  EXPECT_EQ(region_sequence(events),
            (std::vector<std::string>{"begin outer", "begin middle", "begin inner", "end inner",
                                      "end middle", "end outer"}));
  const auto begins = events_of(events, "begin");
  EXPECT_EQ(begins[0]["path"], "outer");
  EXPECT_EQ(begins[1]["path"], "outer/middle");
  EXPECT_EQ(begins[2]["path"], "outer/middle/inner");
  EXPECT_EQ(begins[2]["depth"], 2);
  const auto ends = events_of(events, "end");
  EXPECT_EQ(ends[0]["path"], "outer/middle/inner");
  EXPECT_EQ(ends[2]["path"], "outer");
  EXPECT_LE(begins[0]["time_ns"].get<long long>(), ends[2]["time_ns"].get<long long>());
}

TEST_F(RegionsTest, AnEndEventCarriesItsBeginTime) {
  start();
  {
    RT_REGION("outer");
    RT_REGION("inner");
  }
  const auto events = finish();
  const auto begins = events_of(events, "begin");
  const auto ends = events_of(events, "end");
  ASSERT_EQ(begins.size(), 2u);
  ASSERT_EQ(ends.size(), 2u);
  // ends[0] is inner's (begins[1]), ends[1] is outer's (begins[0]).
  EXPECT_EQ(ends[0]["begin_time_ns"], begins[1]["time_ns"]);
  EXPECT_EQ(ends[1]["begin_time_ns"], begins[0]["time_ns"]);
  EXPECT_GT(ends[1]["begin_time_ns"].get<long long>(), 0);
  for (const auto& b : begins) EXPECT_EQ(b["begin_time_ns"], 0);
}

TEST_F(RegionsTest, RegionObjectInRegionAndCallSiteIdsBehaveTheSame) {
  start();
  int result = 0;
  {
    Region r("object");
    result = in_region(
        "called", [](int a, int b) { return a + b; }, 2, 3);
  }
  for (int i = 0; i < 3; ++i) {
    RT_REGION("loop");
  }
  const auto events = finish();
  EXPECT_EQ(result, 5);
  EXPECT_EQ(region_sequence(events),
            (std::vector<std::string>{"begin object", "begin called", "end called", "end object",
                                      "begin loop", "end loop", "begin loop", "end loop",
                                      "begin loop", "end loop"}));
}

TEST_F(RegionsTest, EventsCarryTheCurrentStep) {
  start();
  set_step(7);
  EXPECT_EQ(step(), 7);
  { RT_REGION("stepped"); }
  set_step(8);
  { RT_REGION("stepped"); }
  const auto events = finish();
  const auto begins = events_of(events, "begin");
  ASSERT_EQ(begins.size(), 2u);
  EXPECT_EQ(begins[0]["step"], 7);
  EXPECT_EQ(begins[1]["step"], 8);
  const auto steps = events_of(events, "step");
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[1]["step"], 8);
}

TEST_F(RegionsTest, ExceptionUnwindingIsReportedOnEnd) {
  start();
  try {
    RT_REGION("outer");
    RT_REGION("throws");
    throw std::runtime_error("boom");
  } catch (const std::runtime_error&) {
  }
  {
    try {
      RT_REGION("handled_inside");
      throw std::runtime_error("caught in scope");
    } catch (...) {
    }
    RT_REGION("after");
  }
  const auto ends = events_of(finish(), "end");
  ASSERT_EQ(ends.size(), 4u);
  EXPECT_EQ(ends[0]["name"], "throws");
  EXPECT_TRUE(ends[0]["unwinding"]);
  EXPECT_EQ(ends[1]["name"], "outer");
  EXPECT_TRUE(ends[1]["unwinding"]);
  EXPECT_EQ(ends[2]["name"], "handled_inside");
  EXPECT_TRUE(ends[2]["unwinding"]);
  EXPECT_EQ(ends[3]["name"], "after");
  EXPECT_FALSE(ends[3]["unwinding"]);
}

TEST_F(RegionsTest, TokensEndedOutOfOrderAreRepaired) {
  start();
  testing::internal::CaptureStderr();
  Token a = begin("a");
  Token b = begin("b");
  end(a);  // b was opened inside a: closed and reopened around a's end
  end(b);
  end(b);  // twice: ignored
  const std::string log = testing::internal::GetCapturedStderr();
  const auto events = finish();
  EXPECT_EQ(region_sequence(events),
            (std::vector<std::string>{"begin a", "begin b", "end b", "end a", "begin b", "end b"}));
  const auto begins = events_of(events, "begin");
  EXPECT_EQ(begins[2]["path"], "b");  // reopened at top level
  EXPECT_NE(log.find("region `a` ended while `b`"), std::string::npos) << log;
  EXPECT_NE(log.find("not open"), std::string::npos) << log;
}

// The path text is kept between events and rebuilt from the first frame
// pushed since: siblings, re-entered prefixes and a repaired out-of-order
// end each get their own path.
TEST_F(RegionsTest, PathsFollowEveryChangeOfTheStack) {
  start();
  {
    RT_REGION("a");
    { RT_REGION("b"); }
    { RT_REGION("c"); }
    mark("in_a");
  }
  {
    RT_REGION("d");
    { RT_REGION("b"); }
  }
  Token x = begin("x");
  Token y = begin("y");
  Token z = begin("z");
  testing::internal::CaptureStderr();
  end(y);  // z is closed and reopened as x/z
  testing::internal::GetCapturedStderr();
  mark("after_repair");
  end(z);
  end(x);
  const auto events = finish();
  std::vector<std::string> paths;
  for (const auto& e : events_of(events, "begin")) paths.push_back(e["path"]);
  EXPECT_EQ(paths,
            (std::vector<std::string>{"a", "a/b", "a/c", "d", "d/b", "x", "x/y", "x/y/z", "x/z"}));
  std::vector<std::string> mark_paths;
  for (const auto& e : events_of(events, "mark")) mark_paths.push_back(e["path"]);
  EXPECT_EQ(mark_paths, (std::vector<std::string>{"a", "x/z"}));
  std::vector<std::string> end_paths;
  for (const auto& e : events_of(events, "end")) end_paths.push_back(e["path"]);
  EXPECT_EQ(end_paths,
            (std::vector<std::string>{"a/b", "a/c", "a", "d/b", "d", "x/y/z", "x/y", "x/z", "x"}));
}

// An end event reuses the path its begin built: children opened and closed
// inside it rebuild (and may reallocate) the text beyond it, never its own.
TEST_F(RegionsTest, AnEndKeepsItsPathWhateverItsChildrenBuilt) {
  start();
  const std::string long_name(300, 'n');
  {
    RT_REGION("p");
    {
      RT_REGION("q");
      { Region child(long_name); }
      {
        RT_REGION("r");
        { RT_REGION("s"); }
      }
      mark("in_q");
    }
  }
  const auto events = finish();
  std::vector<std::string> end_paths;
  for (const auto& e : events_of(events, "end")) end_paths.push_back(e["path"]);
  EXPECT_EQ(end_paths,
            (std::vector<std::string>{"p/q/" + long_name, "p/q/r/s", "p/q/r", "p/q", "p"}));
  std::vector<std::string> mark_paths;
  for (const auto& e : events_of(events, "mark")) mark_paths.push_back(e["path"]);
  EXPECT_EQ(mark_paths, (std::vector<std::string>{"p/q"}));
}

TEST_F(RegionsTest, MarksAndSnapshotsCarryThePath) {
  start();
  {
    RT_REGION("outer");
    mark("checkpoint");
    snapshot("before_save");
  }
  const auto events = finish();
  const auto marks = events_of(events, "mark");
  ASSERT_EQ(marks.size(), 1u);
  EXPECT_EQ(marks[0]["name"], "checkpoint");
  EXPECT_EQ(marks[0]["path"], "outer");
  const auto snaps = events_of(events, "snapshot");
  ASSERT_EQ(snaps.size(), 1u);
  EXPECT_EQ(snaps[0]["reason"], "before_save");
}

TEST_F(RegionsTest, ShortNamesResolveToTheCatalogName) {
  start();
  { RT_REGION("model_loading"); }
  { Region r("inference_denoising"); }
  const auto begins = events_of(finish(), "begin");
  ASSERT_EQ(begins.size(), 2u);
  EXPECT_EQ(begins[0]["name"], "profiler_region_model_loading");
  EXPECT_EQ(begins[1]["name"], "profiler_region_inference_denoising");
  EXPECT_EQ(region_id("model_loading"), region_id("profiler_region_model_loading"));
}

TEST_F(RegionsTest, DeclaredRegionsAreRoutedBeforeTheirFirstEvent) {
  static const RegionId kDeclared = declare_region("declared_up_front", "a test region", 0x336699);
  start();
  { Region r(kDeclared); }
  const auto events = finish();
  std::size_t routed = events.size();
  std::size_t first_begin = events.size();
  for (std::size_t i = 0; i < events.size(); ++i) {
    if (events[i]["event"] == "routed" && events[i]["name"] == "declared_up_front") routed = i;
    if (events[i]["event"] == "begin" && first_begin == events.size()) first_begin = i;
  }
  ASSERT_LT(routed, events.size());
  EXPECT_LT(routed, first_begin);
}

TEST_F(RegionsTest, NothingIsDeliveredAfterShutdown) {
  start();
  { RT_REGION("before"); }
  shutdown();
  { RT_REGION("after"); }
  mark("after");
  const auto events = read_jsonl(file_);
  EXPECT_EQ(region_sequence(events), (std::vector<std::string>{"begin before", "end before"}));
  EXPECT_EQ(events.back()["event"], "close");
  EXPECT_FALSE(enabled());
}

TEST_F(RegionsTest, RegionsOpenAcrossShutdownAndRestartAreNotDeliveredTwice) {
  start();
  Token t = begin("spanning");
  shutdown();
  const std::string second = dir_.file("second.jsonl");
  init(recorder_options(second));
  end(t);  // began under the first start-up: the new sinks never saw its begin
  { RT_REGION("fresh"); }
  shutdown();
  EXPECT_EQ(region_sequence(read_jsonl(second)),
            (std::vector<std::string>{"begin fresh", "end fresh"}));
}

// Regions no sink selected are pushed by the public header's inline code;
// past the stack's 256 frames they go to the library, which skips them with
// one warning. Either way every region that ends pops its own frame.
void nest_unselected(int levels, int probe_at) {
  RT_REGION("deep");
  if (levels == probe_at) {
    RT_REGION("probe");
    mark("in_probe");
  }
  if (levels > 1) nest_unselected(levels - 1, probe_at);
}

TEST_F(RegionsTest, UnselectedRegionsPastTheStackLimitAreSkippedAndTheStackStaysBalanced) {
  start({{"sinks.recorder.regions", "probe,after"}});
  testing::internal::CaptureStderr();
  nest_unselected(300, 100);  // probe below 200 frames of "deep"
  nest_unselected(300, 10);   // probe where the stack is full: not recorded
  { RT_REGION("after"); }
  const std::string log = testing::internal::GetCapturedStderr();
  const auto events = finish();
  EXPECT_EQ(region_sequence(events),
            (std::vector<std::string>{"begin probe", "end probe", "begin after", "end after"}));
  const auto begins = events_of(events, "begin");
  std::string deep_path;
  for (int i = 0; i < 201; ++i) deep_path += "deep/";
  EXPECT_EQ(begins[0]["path"], deep_path + "probe");
  EXPECT_EQ(begins[0]["depth"], 201);
  EXPECT_EQ(begins[1]["path"], "after");
  EXPECT_EQ(begins[1]["depth"], 0);
  const auto marks = events_of(events, "mark");
  ASSERT_EQ(marks.size(), 1u);
  EXPECT_EQ(marks[0]["path"], deep_path + "probe");
  EXPECT_NE(log.find("nested deeper than 256"), std::string::npos) << log;
}

// An unselected region inside a selected one passes the selection on to
// what runs inside it (marks here); outside every selected region nothing.
TEST_F(RegionsTest, AnUnselectedRegionPassesOnTheSelectedRegionAroundIt) {
  start({{"sinks.recorder.regions", "outer"}});
  {
    RT_REGION("outer");
    RT_REGION("inner");
    mark("inside_outer");
  }
  {
    RT_REGION("inner");
    mark("outside_outer");
  }
  const auto events = finish();
  EXPECT_EQ(region_sequence(events), (std::vector<std::string>{"begin outer", "end outer"}));
  const auto marks = events_of(events, "mark");
  ASSERT_EQ(marks.size(), 1u);
  EXPECT_EQ(marks[0]["name"], "inside_outer");
  EXPECT_EQ(marks[0]["path"], "outer/inner");
}

}  // namespace
}  // namespace regiontrace::test
