// Region events delivered by the public header's inline code: with one sink
// that takes region events (not spans), a region only it selected has its
// begin and end built and delivered in the caller. These tests hold that
// path to what the library's own dispatch does (the same run with a second
// event sink goes out of line), and to its exits: a path not built yet, a
// sink that throws, exceptions in flight, a restart, a step filter, and a
// translation unit built without exceptions.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "recorded_events.hpp"
#include "regiontrace/regiontrace.hpp"
#include "test_support.hpp"

static_assert(REGIONTRACE_INLINE_EVENTS == 1, "tests are built with exceptions");

namespace regiontrace::test {
// inline_events_no_exceptions.cpp, built with -fno-exceptions.
bool inline_events_in_no_exceptions_unit();
void regions_built_without_exceptions();

namespace {

// Siblings under one parent at the same depth, and one region name at two
// depths, so that the path text built for one event is not the next one's.
void nested_workload() {
  for (int s = 0; s < 3; ++s) {
    set_step(s);
    RT_REGION("ie.outer");
    {
      RT_REGION("ie.a");
      RT_REGION("ie.x");
    }
    {
      RT_REGION("ie.b");
      RT_REGION("ie.x");
    }
    {
      RT_REGION("ie.a");
      RT_REGION("ie.y");
    }
    { RT_REGION("ie.x"); }
  }
}

// Everything a region event says but its times and thread, as text.
std::vector<std::string> region_lines(const std::vector<nlohmann::json>& events) {
  std::vector<std::string> out;
  for (const auto& e : events) {
    const std::string kind = e["event"];
    if (kind != "begin" && kind != "end") continue;
    out.push_back(kind + " " + e["path"].get<std::string>() + " name=" +
                  e["name"].get<std::string>() + " depth=" + std::to_string(e["depth"].get<int>()) +
                  " step=" + e["step"].dump() + " unwinding=" + e["unwinding"].dump());
  }
  return out;
}

// The thread numbers region events carry.
std::set<long long> region_threads(const std::vector<nlohmann::json>& events) {
  std::set<long long> out;
  for (const auto& e : events) {
    if (e["event"] == "begin" || e["event"] == "end") out.insert(e["thread"].get<long long>());
  }
  return out;
}

// Each end carries its begin's time; times do not go back.
void expect_consistent_times(const std::vector<nlohmann::json>& events) {
  std::vector<long long> open;
  long long last = 0;
  for (const auto& e : events) {
    const std::string kind = e["event"];
    if (kind != "begin" && kind != "end") continue;
    const long long t = e["time_ns"];
    EXPECT_GT(t, 0);
    EXPECT_GE(t, last);
    last = t;
    if (kind == "begin") {
      open.push_back(t);
    } else {
      ASSERT_FALSE(open.empty());
      EXPECT_EQ(e["begin_time_ns"].get<long long>(), open.back()) << e.dump();
      open.pop_back();
    }
  }
  EXPECT_TRUE(open.empty());
}

TEST(InlineEvents, OneEventSinkGetsWhatTheLibrarysDispatchDelivers) {
  CleanEnv env;
  TempDir dir;
  const std::string inline_file = dir.file("inline.jsonl");
  init(recorder_options(inline_file));
  // The table names its one event sink: the header's inline path is on.
  ASSERT_NE(detail::g_region_routing.load()->event_sink, nullptr);
  nested_workload();
  shutdown();
  // A second event sink: every region goes out of line.
  const std::string dispatched_file = dir.file("dispatched.jsonl");
  init(recorder_options(dispatched_file, {{"sinks.recorder2.file", dir.file("other.jsonl")}}));
  ASSERT_EQ(detail::g_region_routing.load()->event_sink, nullptr);
  nested_workload();
  shutdown();

  const auto inline_events = read_jsonl(inline_file);
  const auto dispatched_events = read_jsonl(dispatched_file);
  const auto lines = region_lines(inline_events);
  EXPECT_EQ(lines, region_lines(dispatched_events));
  ASSERT_EQ(lines.size(), 3u * 2u * 8u);
  const std::vector<std::string> step0(lines.begin(), lines.begin() + 16);
  EXPECT_EQ(step0, (std::vector<std::string>{
                       "begin ie.outer name=ie.outer depth=0 step=0 unwinding=false",
                       "begin ie.outer/ie.a name=ie.a depth=1 step=0 unwinding=false",
                       "begin ie.outer/ie.a/ie.x name=ie.x depth=2 step=0 unwinding=false",
                       "end ie.outer/ie.a/ie.x name=ie.x depth=2 step=0 unwinding=false",
                       "end ie.outer/ie.a name=ie.a depth=1 step=0 unwinding=false",
                       "begin ie.outer/ie.b name=ie.b depth=1 step=0 unwinding=false",
                       "begin ie.outer/ie.b/ie.x name=ie.x depth=2 step=0 unwinding=false",
                       "end ie.outer/ie.b/ie.x name=ie.x depth=2 step=0 unwinding=false",
                       "end ie.outer/ie.b name=ie.b depth=1 step=0 unwinding=false",
                       "begin ie.outer/ie.a name=ie.a depth=1 step=0 unwinding=false",
                       "begin ie.outer/ie.a/ie.y name=ie.y depth=2 step=0 unwinding=false",
                       "end ie.outer/ie.a/ie.y name=ie.y depth=2 step=0 unwinding=false",
                       "end ie.outer/ie.a name=ie.a depth=1 step=0 unwinding=false",
                       "begin ie.outer/ie.x name=ie.x depth=1 step=0 unwinding=false",
                       "end ie.outer/ie.x name=ie.x depth=1 step=0 unwinding=false",
                       "end ie.outer name=ie.outer depth=0 step=0 unwinding=false"}));
  EXPECT_EQ(lines[47], "end ie.outer name=ie.outer depth=0 step=2 unwinding=false");
  EXPECT_EQ(region_threads(inline_events).size(), 1u);
  EXPECT_GT(*region_threads(inline_events).begin(), 0);
  expect_consistent_times(inline_events);
  expect_consistent_times(dispatched_events);
}

// Whatever the sink throws from a callback called inline stays in the
// library: the sink is switched off (logged once, closed), the program runs
// on, and the region it threw in gets no end.
void expect_switched_off_after(const char* callback, const std::vector<std::string>& recorded) {
  CleanEnv env;
  TempDir dir;
  const std::string file = dir.file("events.jsonl");
  testing::internal::CaptureStderr();
  init(recorder_options(
      file, {{"sinks.recorder.throw_in", callback}, {"sinks.recorder.throw_region", "ie.second"}}));
  ASSERT_NE(detail::g_region_routing.load()->event_sink, nullptr);
  { RT_REGION("ie.first"); }
  for (int i = 0; i < 3; ++i) {
    RT_REGION("ie.second");
  }
  { RT_REGION("ie.third"); }
  shutdown();
  const std::string log = testing::internal::GetCapturedStderr();
  const auto events = read_jsonl(file);
  EXPECT_EQ(region_sequence(events), recorded);
  EXPECT_EQ(events_of(events, "close").size(), 1u);
  const std::string needle = std::string("sink `recorder` threw from ") + callback +
                             ": recorder asked to throw in " + callback;
  ASSERT_NE(log.find(needle), std::string::npos) << log;
  EXPECT_EQ(log.find(needle, log.find(needle) + 1), std::string::npos) << log;
}

TEST(InlineEvents, ASinkThrowingFromAnInlineBeginIsSwitchedOff) {
  expect_switched_off_after("on_region_begin", {"begin ie.first", "end ie.first"});
}

TEST(InlineEvents, ASinkThrowingFromAnInlineEndIsSwitchedOff) {
  expect_switched_off_after("on_region_end", {"begin ie.first", "end ie.first", "begin ie.second"});
}

struct OpensARegionWhenDestroyed {
  ~OpensARegionWhenDestroyed() { RT_REGION("ie.in_destructor"); }
};

// An end with more exceptions in flight than at its begin is unwinding; a
// region that begins and ends while one exception is in flight is not.
TEST(InlineEvents, UnwindingIsToldFromTheExceptionsInFlightAtTheBegin) {
  CleanEnv env;
  TempDir dir;
  const std::string file = dir.file("events.jsonl");
  init(recorder_options(file));
  set_step(kNoStep);  // as in a process that never set one
  { RT_REGION("ie.warm"); }
  try {
    RT_REGION("ie.outer");
    OpensARegionWhenDestroyed guard;
    RT_REGION("ie.inner");
    throw std::runtime_error("unwind");
  } catch (const std::runtime_error&) {
    RT_REGION("ie.in_handler");
  }
  { RT_REGION("ie.after"); }
  shutdown();
  const auto lines = region_lines(read_jsonl(file));
  EXPECT_EQ(lines, (std::vector<std::string>{
                       "begin ie.warm name=ie.warm depth=0 step=null unwinding=false",
                       "end ie.warm name=ie.warm depth=0 step=null unwinding=false",
                       "begin ie.outer name=ie.outer depth=0 step=null unwinding=false",
                       "begin ie.outer/ie.inner name=ie.inner depth=1 step=null unwinding=false",
                       "end ie.outer/ie.inner name=ie.inner depth=1 step=null unwinding=true",
                       "begin ie.outer/ie.in_destructor name=ie.in_destructor depth=1 step=null "
                       "unwinding=false",
                       "end ie.outer/ie.in_destructor name=ie.in_destructor depth=1 step=null "
                       "unwinding=false",
                       "end ie.outer name=ie.outer depth=0 step=null unwinding=true",
                       "begin ie.in_handler name=ie.in_handler depth=0 step=null unwinding=false",
                       "end ie.in_handler name=ie.in_handler depth=0 step=null unwinding=false",
                       "begin ie.after name=ie.after depth=0 step=null unwinding=false",
                       "end ie.after name=ie.after depth=0 step=null unwinding=false"}));
}

// A region open across a restart ends under sinks that never saw it begin:
// they get no end (the frame is of the earlier start-up).
TEST(InlineEvents, ARegionOpenAcrossARestartEndsUnseenByTheNewSink) {
  CleanEnv env;
  TempDir dir;
  const std::string first = dir.file("first.jsonl");
  const std::string second = dir.file("second.jsonl");
  init(recorder_options(first));
  {
    RT_REGION("ie.across");
    shutdown();
    init(recorder_options(second));
  }
  { RT_REGION("ie.later"); }
  shutdown();
  EXPECT_EQ(region_sequence(read_jsonl(first)), (std::vector<std::string>{"begin ie.across"}));
  EXPECT_EQ(region_sequence(read_jsonl(second)),
            (std::vector<std::string>{"begin ie.later", "end ie.later"}));
}

// Begins follow the sink's steps; an end follows its begin, whatever the
// step is by then.
TEST(InlineEvents, StepsSelectBeginsAndEndsFollowTheirBegins) {
  CleanEnv env;
  TempDir dir;
  const std::string file = dir.file("events.jsonl");
  init(recorder_options(file, {{"sinks.recorder.steps", "1"}}));
  set_step(0);
  { RT_REGION("ie.step0"); }
  set_step(1);
  {
    RT_REGION("ie.from1");
    set_step(2);
  }
  {
    RT_REGION("ie.step2");
    set_step(1);
  }
  shutdown();
  const auto lines = region_lines(read_jsonl(file));
  EXPECT_EQ(lines, (std::vector<std::string>{
                       "begin ie.from1 name=ie.from1 depth=0 step=1 unwinding=false",
                       "end ie.from1 name=ie.from1 depth=0 step=2 unwinding=false"}));
}

// Code built with -fno-exceptions cannot catch for the sink: its regions go
// out of line, with the same events.
TEST(InlineEvents, CodeBuiltWithoutExceptionsGoesOutOfLine) {
  EXPECT_FALSE(inline_events_in_no_exceptions_unit());
  CleanEnv env;
  TempDir dir;
  const std::string file = dir.file("events.jsonl");
  init(recorder_options(file));
  set_step(kNoStep);
  for (int i = 0; i < 2; ++i) regions_built_without_exceptions();
  shutdown();
  const auto events = read_jsonl(file);
  EXPECT_EQ(region_lines(events),
            (std::vector<std::string>{
                "begin nx.outer name=nx.outer depth=0 step=null unwinding=false",
                "begin nx.outer/nx.inner name=nx.inner depth=1 step=null unwinding=false",
                "end nx.outer/nx.inner name=nx.inner depth=1 step=null unwinding=false",
                "end nx.outer name=nx.outer depth=0 step=null unwinding=false",
                "begin nx.outer name=nx.outer depth=0 step=null unwinding=false",
                "begin nx.outer/nx.inner name=nx.inner depth=1 step=null unwinding=false",
                "end nx.outer/nx.inner name=nx.inner depth=1 step=null unwinding=false",
                "end nx.outer name=nx.outer depth=0 step=null unwinding=false"}));
  expect_consistent_times(events);
}

}  // namespace
}  // namespace regiontrace::test
