// Many threads entering regions at once: every thread's sequence is whole and
// correctly nested, paths are per thread, thread ids are distinct.
#include <gtest/gtest.h>

#include <map>
#include <thread>

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
}  // namespace
}  // namespace regiontrace::test
