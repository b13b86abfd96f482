// Many threads entering regions at once: every thread's sequence is whole and
// correctly nested, paths are per thread, thread ids are distinct.
#include <gtest/gtest.h>

#include <map>
#include <thread>

#include "dispatcher.hpp"
#include "recorded_events.hpp"
#include "regiontrace/regiontrace.hpp"
#include "test_support.hpp"

namespace regiontrace::test {
namespace {

TEST(Threads, ManyThreadsKeepTheirOwnStacks) {
  CleanEnv env;
  TempDir dir;
  const std::string file = dir.file("events.jsonl");
  init(recorder_options(file));
  constexpr int kThreads = 8;
  constexpr int kIterations = 200;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t] {
      RT_REGION("worker");
      for (int i = 0; i < kIterations; ++i) {
        RT_REGION("iteration");
        if ((i + t) % 3 == 0) {
          RT_REGION("inner");
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  shutdown();

  std::map<long long, std::vector<nlohmann::json>> by_thread;
  for (const auto& e : read_jsonl(file)) {
    if (e["event"] == "begin" || e["event"] == "end") by_thread[e["thread"]].push_back(e);
  }
  ASSERT_EQ(by_thread.size(), static_cast<std::size_t>(kThreads));
  for (const auto& [thread, events] : by_thread) {
    std::vector<std::string> stack;
    int iterations = 0;
    for (const auto& e : events) {
      const std::string name = e["name"];
      if (e["event"] == "begin") {
        stack.push_back(name);
        std::string path;
        for (const auto& s : stack) path += (path.empty() ? "" : "/") + s;
        EXPECT_EQ(e["path"], path);
        EXPECT_EQ(e["depth"], static_cast<int>(stack.size()) - 1);
        if (name == "iteration") ++iterations;
      } else {
        ASSERT_FALSE(stack.empty());
        EXPECT_EQ(stack.back(), name);
        stack.pop_back();
      }
    }
    EXPECT_TRUE(stack.empty()) << "thread " << thread;
    EXPECT_EQ(iterations, kIterations);
  }
}

TEST(Threads, RegionsLeftOpenByAThreadEndWithIt) {
  CleanEnv env;
  TempDir dir;
  const std::string file = dir.file("events.jsonl");
  init(recorder_options(file));
  std::thread([] { begin("never_ended"); }).join();
  shutdown();
  EXPECT_EQ(region_sequence(read_jsonl(file)),
            (std::vector<std::string>{"begin never_ended", "end never_ended"}));
}

TEST(Threads, EndOnAnotherThreadIsIgnoredWithAWarning) {
  CleanEnv env;
  TempDir dir;
  const std::string file = dir.file("events.jsonl");
  init(recorder_options(file));
  Token t = begin("cross_thread");
  testing::internal::CaptureStderr();
  std::thread([t] { end(t); }).join();
  const std::string log = testing::internal::GetCapturedStderr();
  end(t);
  shutdown();
  EXPECT_NE(log.find("another thread"), std::string::npos) << log;
  EXPECT_EQ(region_sequence(read_jsonl(file)),
            (std::vector<std::string>{"begin cross_thread", "end cross_thread"}));
}

// Thread numbers fill 23 bits of a token (regiontrace/detail/region_token.hpp).
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
