// A sink that throws is switched off, logged once, closed; the others go on.
#include <gtest/gtest.h>

#include "recorded_events.hpp"
#include "regiontrace/regiontrace.hpp"
#include "test_support.hpp"

namespace regiontrace::test {
namespace {

TEST(SinkFailure, AThrowingSinkIsSwitchedOffAndTheOtherKeepsReceiving) {
  CleanEnv env;
  TempDir dir;
  const std::string bad = dir.file("bad.jsonl");
  const std::string good = dir.file("good.jsonl");
  testing::internal::CaptureStderr();
  init(recorder_options(bad, {{"sinks.recorder.throw_in", "on_region_begin"},
                              {"sinks.recorder.throw_region", "second"},
                              {"sinks.recorder2.file", good}}));
  { RT_REGION("first"); }
  for (int i = 0; i < 3; ++i) {
    RT_REGION("second");
  }
  { RT_REGION("third"); }
  shutdown();
  const std::string log = testing::internal::GetCapturedStderr();

  EXPECT_EQ(region_sequence(read_jsonl(good)),
            (std::vector<std::string>{"begin first", "end first", "begin second", "end second",
                                      "begin second", "end second", "begin second", "end second",
                                      "begin third", "end third"}));
  // The failing sink kept what it had accepted and was closed once.
  const auto bad_events = read_jsonl(bad);
  EXPECT_EQ(region_sequence(bad_events), (std::vector<std::string>{"begin first", "end first"}));
  EXPECT_EQ(events_of(bad_events, "close").size(), 1u);
  // Logged once, naming the sink and the callback.
  const std::string needle = "sink `recorder` threw from on_region_begin";
  ASSERT_NE(log.find(needle), std::string::npos) << log;
  EXPECT_EQ(log.find(needle, log.find(needle) + 1), std::string::npos) << log;
}

TEST(SinkFailure, ASinkThatFailsToStartIsAStartUpError) {
  CleanEnv env;
  TempDir dir;
  try {
    init(recorder_options(dir.file("e.jsonl"), {{"sinks.recorder.fail_construction", "true"}}));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("sink `recorder`"), std::string::npos) << msg;
    EXPECT_NE(msg.find("failed to start: asked to fail"), std::string::npos) << msg;
  }
  EXPECT_FALSE(enabled());
}

}  // namespace
}  // namespace regiontrace::test
