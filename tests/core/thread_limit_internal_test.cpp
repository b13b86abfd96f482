// The thread limit of the region token (region_token.hpp), reached by
// setting the dispatcher's thread counter: internals, so this file links the
// core statically (tests/CMakeLists.txt: *_internal_test.cpp).
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "dispatcher.hpp"
#include "recorded_events.hpp"
#include "regiontrace/regiontrace.hpp"
#include "test_support.hpp"

namespace regiontrace::test {
namespace {

// The last number that fits is tracked as usual, and its tokens keep the
// delivered bit to themselves; the next thread is not tracked (its regions do
// nothing, once warned) instead of writing its number into that bit.
TEST(Threads, PastTheThreadLimitAThreadIsNotTrackedAndTokensStayWhole) {
  CleanEnv env;
  TempDir dir;
  const std::string file = dir.file("events.jsonl");
  init(recorder_options(file));
  const std::uint64_t saved =
      detail::exchange_thread_counter_for_testing(detail::kMaxTrackedThreads - 1);
  std::uint64_t last_token = 0;
  std::thread([&] {
    Token t = begin("last_tracked_thread");
    ASSERT_TRUE(t.valid());
    last_token = detail::enter(region_id("raw_token"));
    detail::leave(last_token, false);
    end(t);
  }).join();
  testing::internal::CaptureStderr();
  bool untracked_valid = true;
  std::uint64_t untracked_token = 1;
  std::thread([&] {
    untracked_valid = begin("untracked_thread").valid();
    untracked_token = detail::enter(region_id("untracked_thread"));
    { RT_REGION("untracked_thread"); }
    mark("untracked_mark");
  }).join();
  std::thread([] { RT_REGION("untracked_thread"); }).join();  // warned once only
  const std::string log = testing::internal::GetCapturedStderr();
  detail::exchange_thread_counter_for_testing(saved);
  { RT_REGION("tracked_again"); }  // this thread's stack was made before
  shutdown();

  EXPECT_EQ(detail::token_thread(last_token), detail::kMaxTrackedThreads);
  EXPECT_TRUE(detail::token_delivered(last_token));
  EXPECT_EQ(detail::token_thread(last_token & ~detail::kTokenDelivered),
            detail::kMaxTrackedThreads);
  EXPECT_FALSE(untracked_valid);
  EXPECT_EQ(untracked_token, 0u);
  EXPECT_NE(log.find("not recorded"), std::string::npos) << log;
  EXPECT_EQ(log.find("not recorded"), log.rfind("not recorded")) << log;

  std::vector<std::string> sequence;
  for (const auto& e : read_jsonl(file)) {
    if (e["event"] != "begin" && e["event"] != "end") continue;
    sequence.push_back(std::string(e["event"]) + " " + std::string(e["name"]));
    if (e["name"] == "last_tracked_thread") {
      EXPECT_EQ(e["thread"].get<std::uint64_t>(), detail::kMaxTrackedThreads);
    }
  }
  EXPECT_EQ(sequence, (std::vector<std::string>{"begin last_tracked_thread", "begin raw_token",
                                                "end raw_token", "end last_tracked_thread",
                                                "begin tracked_again", "end tracked_again"}));
}

}  // namespace
}  // namespace regiontrace::test
