// Spans (kInterestSpans): a sink that asks for them gets its regions as
// finished spans in batches, handed over by the recording thread when its
// buffer fills and when it exits, and by the stopping thread with what a
// live thread still holds, open spans included. The `recorder` test sink
// writes one line per batch.
#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <map>
#include <set>
#include <thread>
#include <utility>

#include "recorded_events.hpp"
#include "regiontrace/regiontrace.hpp"
#include "test_support.hpp"

namespace regiontrace::test {
namespace {

Options span_options(const std::string& file, std::map<std::string, std::string> extra = {}) {
  extra["sinks.recorder.spans"] = "true";
  return recorder_options(file, std::move(extra));
}

// Region id -> name, from the sink's routed events.
std::map<long long, std::string> routed_names(const std::vector<nlohmann::json>& events) {
  std::map<long long, std::string> names;
  for (const auto& e : events_of(events, "routed")) names[e["id"]] = e["name"];
  return names;
}

// Every span of every batch, in the order delivered, with its name and
// its batch's fields.
std::vector<nlohmann::json> all_spans(const std::vector<nlohmann::json>& events) {
  const auto names = routed_names(events);
  std::vector<nlohmann::json> out;
  for (const auto& batch : events_of(events, "spans")) {
    for (nlohmann::json s : batch["spans"]) {
      s["name"] = names.at(s["id"]);
      s["thread"] = batch["thread"];
      s["os_tid"] = batch["os_tid"];
      s["on_os_tid"] = batch["on_os_tid"];
      out.push_back(s);
    }
  }
  return out;
}

long this_tid() {
  return static_cast<long>(::syscall(SYS_gettid));
}

TEST(Spans, ASpanSinkGetsItsRegionsAsNestedTimedSpansAndNoRegionEvents) {
  CleanEnv env;
  TempDir dir;
  const std::string file = dir.file("events.jsonl");
  init(span_options(file));
  set_step(4);
  {
    RT_REGION("outer");
    for (int i = 0; i < 3; ++i) {
      if (i == 2) set_step(5);
      RT_REGION("inner");
    }
  }
  shutdown();

  const auto events = read_jsonl(file);
  EXPECT_TRUE(region_sequence(events).empty()) << "a span sink gets no on_region_begin/end";
  const auto spans = all_spans(events);
  ASSERT_EQ(spans.size(), 4u);
  // In the order they ended: the three inner ones, then outer.
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(spans[i]["name"], "inner");
    EXPECT_EQ(spans[i]["depth"], 1);
    EXPECT_EQ(spans[i]["open"], false);
    EXPECT_EQ(spans[i]["unwinding"], false);
    EXPECT_LE(spans[i]["begin_ns"].get<long long>(), spans[i]["end_ns"].get<long long>());
    EXPECT_GE(spans[i]["begin_ns"].get<long long>(), spans[3]["begin_ns"].get<long long>());
    EXPECT_LE(spans[i]["end_ns"].get<long long>(), spans[3]["end_ns"].get<long long>());
    if (i > 0) {
      EXPECT_GE(spans[i]["begin_ns"].get<long long>(), spans[i - 1]["end_ns"].get<long long>());
    }
  }
  EXPECT_EQ(spans[0]["step"], 4);
  EXPECT_EQ(spans[2]["step"], 5);
  EXPECT_EQ(spans[3]["name"], "outer");
  EXPECT_EQ(spans[3]["depth"], 0);
  EXPECT_EQ(spans[3]["step"], 5);
  // This thread was alive at the stop: the stop handed its spans over here.
  EXPECT_EQ(spans[3]["os_tid"], this_tid());
  EXPECT_EQ(spans[3]["on_os_tid"], this_tid());
}

TEST(Spans, AFullBufferIsHandedOverByItsThreadAndAnExitingThreadSendsItsLastBatch) {
  CleanEnv env;
  TempDir dir;
  const std::string file = dir.file("events.jsonl");
  init(span_options(file));
  constexpr int kRegions = 2500;  // two full buffers of 1024 and 452 more
  long worker_tid = 0;
  std::thread([&] {
    worker_tid = this_tid();
    for (int i = 0; i < kRegions; ++i) {
      RT_REGION("many");
    }
  }).join();
  shutdown();

  const auto events = read_jsonl(file);
  const auto batches = events_of(events, "spans");
  ASSERT_EQ(batches.size(), 3u);
  EXPECT_EQ(batches[0]["spans"].size(), 1024u);
  EXPECT_EQ(batches[1]["spans"].size(), 1024u);
  EXPECT_EQ(batches[2]["spans"].size(), 452u);
  EXPECT_EQ(batches[0]["last"], false);
  EXPECT_EQ(batches[1]["last"], false);
  EXPECT_EQ(batches[2]["last"], true);
  for (const auto& b : batches) {
    EXPECT_EQ(b["os_tid"], worker_tid);
    EXPECT_EQ(b["on_os_tid"], worker_tid) << "handed over on the recording thread";
  }
  const auto spans = all_spans(events);
  ASSERT_EQ(spans.size(), static_cast<std::size_t>(kRegions));
  for (std::size_t i = 1; i < spans.size(); ++i) {
    ASSERT_GE(spans[i]["begin_ns"].get<long long>(), spans[i - 1]["end_ns"].get<long long>())
        << "span " << i << " is out of order";
  }
}

TEST(Spans, TheStopHandsOverWhatALiveThreadHoldsWithTheSpansStillOpen) {
  CleanEnv env;
  TempDir dir;
  const std::string file = dir.file("events.jsonl");
  init(span_options(file));
  Rendezvous rendezvous;
  long worker_tid = 0;
  std::thread worker([&] {
    worker_tid = this_tid();
    RT_REGION("held");
    for (int i = 0; i < 10; ++i) {
      RT_REGION("done");
    }
    {
      RT_REGION("inner_held");
      rendezvous.park();
    }
    RT_REGION("after_the_stop");
  });
  rendezvous.wait_parked();
  shutdown();
  rendezvous.release();
  worker.join();

  const auto spans = all_spans(read_jsonl(file));
  ASSERT_EQ(spans.size(), 12u);
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(spans[i]["name"], "done");
    EXPECT_EQ(spans[i]["open"], false);
    EXPECT_EQ(spans[i]["depth"], 1);
  }
  // Open ones innermost first, ending at the stop.
  EXPECT_EQ(spans[10]["name"], "inner_held");
  EXPECT_EQ(spans[10]["depth"], 1);
  EXPECT_EQ(spans[11]["name"], "held");
  EXPECT_EQ(spans[11]["depth"], 0);
  for (int i = 10; i < 12; ++i) {
    EXPECT_EQ(spans[i]["open"], true);
    EXPECT_GE(spans[i]["end_ns"].get<long long>(), spans[9]["end_ns"].get<long long>());
    EXPECT_EQ(spans[i]["os_tid"], worker_tid);
    EXPECT_EQ(spans[i]["on_os_tid"], this_tid()) << "handed over by the stopping thread";
  }
  EXPECT_LE(spans[11]["begin_ns"].get<long long>(), spans[0]["begin_ns"].get<long long>());
}

// The spans a thread has open are its frames, which the stopping thread
// reads while the thread records on (TSan checks the reading); a span the
// thread finishes meanwhile comes once, finished or open, never as both.
TEST(Spans, AStopWhileAThreadRecordsGetsEachSpanOnceWholeAndItsOpenOnesNested) {
  CleanEnv env;
  TempDir dir;
  const std::string file = dir.file("events.jsonl");
  init(span_options(file));
  std::atomic<long> pairs{0};
  std::atomic<bool> stop{false};
  long worker_tid = 0;
  std::thread worker([&] {
    worker_tid = this_tid();
    while (!stop.load(std::memory_order_relaxed)) {
      RT_REGION("outer_loop");
      {
        RT_REGION("inner_loop");
        pairs.fetch_add(1, std::memory_order_relaxed);
      }
    }
  });
  while (pairs.load(std::memory_order_relaxed) < 5000) std::this_thread::yield();
  shutdown();
  const long at_stop = pairs.load(std::memory_order_relaxed);
  stop.store(true, std::memory_order_relaxed);
  worker.join();

  std::vector<nlohmann::json> spans;
  for (const auto& s : all_spans(read_jsonl(file))) {
    if (s["os_tid"] == worker_tid) spans.push_back(s);
  }
  ASSERT_GE(spans.size(), 5000u);
  EXPECT_LE(spans.size(), 2u * static_cast<std::size_t>(at_stop) + 2u);
  std::set<std::pair<int, long long>> seen;  // (depth, begin): one span each
  int open = 0;
  for (const auto& s : spans) {
    const int depth = s["depth"];
    EXPECT_EQ(s["name"], depth == 0 ? "outer_loop" : "inner_loop");
    EXPECT_LE(s["begin_ns"].get<long long>(), s["end_ns"].get<long long>());
    EXPECT_GT(s["begin_ns"].get<long long>(), 0);
    EXPECT_TRUE(seen.insert({depth, s["begin_ns"].get<long long>()}).second)
        << "depth " << depth << " begun at " << s["begin_ns"] << " came twice";
    if (s["open"] == true) ++open;
  }
  EXPECT_LE(open, 2);
}

// A region begun while an exception unwinds (in a destructor) and left
// normally is not an unwinding span; the inline end leaves both cases to the
// library when the count of exceptions in flight changed.
TEST(Spans, ARegionBegunAndEndedWhileAnExceptionUnwindsIsNotAnUnwindingSpan) {
  CleanEnv env;
  TempDir dir;
  const std::string file = dir.file("events.jsonl");
  init(span_options(file));
  { RT_REGION("warm"); }  // the thread's ring exists: the ends below can be inline
  struct CleanUp {
    ~CleanUp() { RT_REGION("in_destructor"); }
  };
  try {
    RT_REGION("throws");
    CleanUp c;
    throw std::runtime_error("out");
  } catch (const std::exception&) {
  }
  shutdown();
  const auto spans = all_spans(read_jsonl(file));
  ASSERT_EQ(spans.size(), 3u);
  EXPECT_EQ(spans[1]["name"], "in_destructor");
  EXPECT_EQ(spans[1]["unwinding"], false);
  EXPECT_EQ(spans[1]["depth"], 1);
  EXPECT_EQ(spans[2]["name"], "throws");
  EXPECT_EQ(spans[2]["unwinding"], true);
}

// An out-of-order end closes and reopens the regions inside it; one that is
// no longer selected when reopened (its step is filtered out now) records no
// second span, though its guard's token still says delivered.
TEST(Spans, ARegionReopenedUnselectedByAnOutOfOrderEndRecordsNoSecondSpan) {
  CleanEnv env;
  TempDir dir;
  const std::string file = dir.file("events.jsonl");
  init(span_options(file, {{"sinks.recorder.steps", "1"}}));
  set_step(1);
  { RT_REGION("warm"); }
  testing::internal::CaptureStderr();
  Token outer = begin("outer_token");
  {
    RT_REGION("inner_scope");
    set_step(2);
    end(outer);  // inner_scope is closed, then reopened under step 2
  }
  testing::internal::GetCapturedStderr();
  shutdown();
  const auto spans = all_spans(read_jsonl(file));
  std::vector<std::string> names;
  for (const auto& s : spans) {
    names.push_back(s["name"]);
    EXPECT_GT(s["begin_ns"].get<long long>(), 0) << s.dump();
    EXPECT_EQ(s["open"], false) << s.dump();
  }
  EXPECT_EQ(names, (std::vector<std::string>{"warm", "inner_scope", "outer_token"}));
}

TEST(Spans, SpanAndEventSinksSideBySideGetTheSameTimesForTheRegionsBothSelected) {
  CleanEnv env;
  TempDir dir;
  const std::string events_file = dir.file("events.jsonl");
  const std::string spans_file = dir.file("spans.jsonl");
  init(recorder_options(events_file, {{"sinks.recorder2.file", spans_file},
                                      {"sinks.recorder2.spans", "true"},
                                      {"sinks.recorder2.regions", "picked"}}));
  {
    RT_REGION("picked");
    RT_REGION("not_picked");
  }
  {
    RT_REGION("not_picked");
    RT_REGION("picked");
  }
  shutdown();

  const auto events = read_jsonl(events_file);
  EXPECT_EQ(region_sequence(events),
            (std::vector<std::string>{"begin picked", "begin not_picked", "end not_picked",
                                      "end picked", "begin not_picked", "begin picked",
                                      "end picked", "end not_picked"}));
  EXPECT_TRUE(events_of(events, "spans").empty());
  const auto spans = all_spans(read_jsonl(spans_file));
  ASSERT_EQ(spans.size(), 2u);
  std::vector<nlohmann::json> picked_ends;
  for (const auto& e : events_of(events, "end")) {
    if (e["name"] == "picked") picked_ends.push_back(e);
  }
  ASSERT_EQ(picked_ends.size(), 2u);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(spans[i]["name"], "picked");
    EXPECT_EQ(spans[i]["depth"], picked_ends[i]["depth"]);
    EXPECT_EQ(spans[i]["begin_ns"], picked_ends[i]["begin_time_ns"]);
    EXPECT_EQ(spans[i]["end_ns"], picked_ends[i]["time_ns"]);
  }
}

TEST(Spans, ARegionLeftByAnExceptionIsAnUnwindingSpan) {
  CleanEnv env;
  TempDir dir;
  const std::string file = dir.file("events.jsonl");
  init(span_options(file));
  try {
    RT_REGION("throws");
    throw std::runtime_error("out");
  } catch (const std::exception&) {
  }
  { RT_REGION("returns"); }
  shutdown();
  const auto spans = all_spans(read_jsonl(file));
  ASSERT_EQ(spans.size(), 2u);
  EXPECT_EQ(spans[0]["name"], "throws");
  EXPECT_EQ(spans[0]["unwinding"], true);
  EXPECT_EQ(spans[1]["name"], "returns");
  EXPECT_EQ(spans[1]["unwinding"], false);
}

TEST(Spans, ARegionOpenAcrossARestartIsNotASpanOfTheNextStartUp) {
  CleanEnv env;
  TempDir dir;
  const std::string first = dir.file("first.jsonl");
  const std::string second = dir.file("second.jsonl");
  init(span_options(first));
  Token across = begin("across");
  { RT_REGION("in_first"); }
  shutdown();
  init(span_options(second));
  { RT_REGION("in_second"); }
  end(std::move(across));
  shutdown();

  const auto one = all_spans(read_jsonl(first));
  ASSERT_EQ(one.size(), 2u);
  EXPECT_EQ(one[0]["name"], "in_first");
  EXPECT_EQ(one[1]["name"], "across");
  EXPECT_EQ(one[1]["open"], true);
  const auto two = all_spans(read_jsonl(second));
  ASSERT_EQ(two.size(), 1u);
  EXPECT_EQ(two[0]["name"], "in_second");
  EXPECT_EQ(two[0]["depth"], 1) << "`across` is still open below it";
}

// The inline end of a span-only frame trusts the frame's span key: a
// region at the same depth that an event sink selected too must still get
// its end event, and a scope open across a restart must not become a span
// of the next start-up, whichever of its regions ends first.
TEST(Spans, SpanOnlyAndEventFramesTakingTurnsAtOneDepthKeepTheirOwnEnds) {
  CleanEnv env;
  TempDir dir;
  const std::string events_file = dir.file("events.jsonl");
  const std::string spans_file = dir.file("spans.jsonl");
  init(recorder_options(events_file, {{"sinks.recorder.regions", "evented"},
                                      {"sinks.recorder2.file", spans_file},
                                      {"sinks.recorder2.spans", "true"}}));
  for (int i = 0; i < 3000; ++i) {  // past a full ring: hand-overs between them
    { RT_REGION("spanned"); }
    { RT_REGION("evented"); }
  }
  shutdown();
  const auto events = read_jsonl(events_file);
  EXPECT_EQ(events_of(events, "begin").size(), 3000u);
  EXPECT_EQ(events_of(events, "end").size(), 3000u);
  const auto spans = all_spans(read_jsonl(spans_file));
  ASSERT_EQ(spans.size(), 6000u);
  for (std::size_t i = 0; i < spans.size(); ++i) {
    EXPECT_EQ(spans[i]["name"], i % 2 == 0 ? "spanned" : "evented") << i;
    EXPECT_EQ(spans[i]["depth"], 0) << i;
  }
}

TEST(Spans, AScopeOpenAcrossARestartIsNotASpanOfTheNextStartUpEvenEndingFirst) {
  CleanEnv env;
  TempDir dir;
  const std::string first = dir.file("first.jsonl");
  const std::string second = dir.file("second.jsonl");
  init(span_options(first));
  { RT_REGION("warm"); }  // the thread's ring exists: the scope below is inline
  {
    RT_REGION("across");
    shutdown();
    init(span_options(second));
  }
  {
    RT_REGION("after");
    RT_REGION("inner");
  }
  shutdown();
  const auto one = all_spans(read_jsonl(first));
  ASSERT_EQ(one.size(), 2u);
  EXPECT_EQ(one[0]["name"], "warm");
  EXPECT_EQ(one[1]["name"], "across");
  EXPECT_EQ(one[1]["open"], true);
  const auto two = all_spans(read_jsonl(second));
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[0]["name"], "inner");
  EXPECT_EQ(two[0]["depth"], 1);
  EXPECT_EQ(two[1]["name"], "after");
  EXPECT_EQ(two[1]["depth"], 0);
}

// After a thread's first span, a region only span sinks selected is
// recorded by Region's inline code; these check that it keeps to what the
// library's path does: the step filter, and noting that an awaited region
// was entered.
TEST(Spans, InlineRecordedSpansKeepToTheStepFilter) {
  CleanEnv env;
  TempDir dir;
  const std::string file = dir.file("events.jsonl");
  init(span_options(file, {{"sinks.recorder.steps", "1,3"}}));
  for (int step = 0; step < 5; ++step) {
    set_step(step);
    for (int i = 0; i < 3; ++i) {
      RT_REGION("stepped");
    }
  }
  shutdown();
  std::vector<int> steps;
  for (const auto& s : all_spans(read_jsonl(file))) steps.push_back(s["step"]);
  EXPECT_EQ(steps, (std::vector<int>{1, 1, 1, 3, 3, 3}));
}

TEST(Spans, AnAwaitedRegionEnteredOnTheInlinePathIsNotReportedNeverEntered) {
  CleanEnv env;
  TempDir dir;
  const std::string file = dir.file("events.jsonl");
  testing::internal::CaptureStderr();
  init(span_options(file,
                    {{"sinks.recorder.regions", "spans_warm_up,spans_late_one,spans_late_two"}}));
  {
    RT_REGION("spans_warm_up");  // the thread's first span: its ring is made
  }
  for (int i = 0; i < 3; ++i) {
    RT_REGION("spans_late_one");
  }
  shutdown();
  const std::string log = testing::internal::GetCapturedStderr();
  EXPECT_EQ(log.find("region `spans_late_one` was selected"), std::string::npos) << log;
  EXPECT_NE(log.find("region `spans_late_two` was selected"), std::string::npos) << log;
  std::vector<std::string> names;
  for (const auto& s : all_spans(read_jsonl(file))) names.push_back(s["name"]);
  EXPECT_EQ(names, (std::vector<std::string>{"spans_warm_up", "spans_late_one", "spans_late_one",
                                             "spans_late_one"}));
}

TEST(Spans, ASinkThatThrowsInOnSpansIsSwitchedOffAndTheOthersGoOn) {
  CleanEnv env;
  TempDir dir;
  const std::string file = dir.file("events.jsonl");
  const std::string other = dir.file("other.jsonl");
  init(span_options(file, {{"sinks.recorder.throw_in", "on_spans"},
                           {"sinks.recorder2.file", other},
                           {"sinks.recorder2.spans", "true"},
                           {"log_level", "off"}}));
  std::thread([] {
    for (int i = 0; i < 1500; ++i) {
      RT_REGION("work");
    }
  }).join();
  shutdown();
  const auto failed = read_jsonl(file);
  EXPECT_TRUE(events_of(failed, "spans").empty());
  ASSERT_FALSE(failed.empty());
  EXPECT_EQ(failed.back()["event"], "close");
  EXPECT_EQ(all_spans(read_jsonl(other)).size(), 1500u);
}

}  // namespace
}  // namespace regiontrace::test
