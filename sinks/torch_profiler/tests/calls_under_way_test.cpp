// The gate's count of calls under way (calls_under_way.hpp), without
// libtorch: threads make calls through a gate that a closer shuts, waits
// out, and reopens on a fresh "session", as ProfilerSession::finish() does.
#include "calls_under_way.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

namespace regiontrace::torch_profiler {
namespace {

// Stands for a session's events: alive from its start until finish() frees
// them, which a call still writing into would notice.
struct Session {
  std::atomic<bool> alive{true};
  std::atomic<std::int64_t> writes{0};
};

struct Outcome {
  std::int64_t calls = 0;
  std::int64_t writes_after_finish = 0;
};

// Four threads call in a loop while the test thread finishes and restarts
// sessions; a call that passed the gate must never find its session finished.
Outcome run_sessions(bool self_fenced, int session_count) {
  prepare_calls_under_way();
  calls_detail::g_self_fenced.store(self_fenced);
  std::atomic<Session*> live{nullptr};
  std::atomic<bool> stop{false};
  std::atomic<std::int64_t> calls{0};
  std::atomic<std::int64_t> bad{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < 4; ++t) {
    callers.emplace_back([&] {
      std::int64_t n = 0;
      while (!stop.load(std::memory_order_relaxed)) {
        Session* s = live.load(std::memory_order_acquire);
        if (s == nullptr) {
          std::this_thread::yield();
          continue;
        }
        const CallUnderWay call([&] { return live.load(std::memory_order_acquire) == s; });
        if (!call.entered()) continue;
        ++n;
        // A call as long as the profiler's (about a microsecond), which
        // finds its session alive from beginning to end.
        for (int i = 0; i < 64; ++i) {
          if (!s->alive.load(std::memory_order_relaxed)) bad.fetch_add(1);
          s->writes.fetch_add(1, std::memory_order_relaxed);
        }
      }
      calls.fetch_add(n);
    });
  }
  std::vector<std::unique_ptr<Session>> sessions;
  while (static_cast<int>(sessions.size()) < session_count) {
    sessions.push_back(std::make_unique<Session>());
    live.store(sessions.back().get(), std::memory_order_release);
    std::this_thread::sleep_for(std::chrono::microseconds(200));
    live.store(nullptr);  // closes the gate
    wait_for_calls_under_way();
    sessions.back()->alive.store(false, std::memory_order_relaxed);  // "frees" its events
  }
  stop.store(true);
  for (std::thread& t : callers) t.join();
  prepare_calls_under_way();  // back to what the kernel offers
  return {calls.load(), bad.load()};
}

TEST(CallsUnderWay, NoCallOutlivesTheWaitWithMembarrier) {
  const Outcome o = run_sessions(false, 400);
  EXPECT_GT(o.calls, 1000);
  EXPECT_EQ(o.writes_after_finish, 0);
}

TEST(CallsUnderWay, NoCallOutlivesTheWaitWhenEachCallFencesItself) {
  const Outcome o = run_sessions(true, 400);
  EXPECT_GT(o.calls, 1000);
  EXPECT_EQ(o.writes_after_finish, 0);
}

TEST(CallsUnderWay, AWaitReturnsAtOnceWhenNothingIsUnderWay) {
  prepare_calls_under_way();
  {
    const CallUnderWay refused([] { return false; });
  }
  {
    const CallUnderWay done([] { return true; });
  }
  const auto t0 = std::chrono::steady_clock::now();
  wait_for_calls_under_way();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));  // not stuck
}

TEST(CallsUnderWay, AWaitWaitsForACallThatEntered) {
  prepare_calls_under_way();
  std::atomic<bool> gate{true};
  std::atomic<bool> inside{false};
  std::atomic<bool> release{false};
  std::atomic<bool> left{false};
  std::thread caller([&] {
    const CallUnderWay call([&] { return gate.load(); });
    inside.store(true);
    while (!release.load()) std::this_thread::yield();
    left.store(true);
  });
  while (!inside.load()) std::this_thread::yield();
  gate.store(false);
  std::atomic<bool> waited{false};
  std::thread closer([&] {
    wait_for_calls_under_way();
    waited.store(left.load());
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  release.store(true);
  closer.join();
  caller.join();
  EXPECT_TRUE(waited.load()) << "the wait returned while the call was still inside";
}

// An op may end on another thread than it began on: only the sum counts.
TEST(CallsUnderWay, OpsOpenAreCountedAcrossThreadsAndThreadsThatEnded) {
  prepare_calls_under_way();
  const std::int64_t before = ops_open(2);
  std::thread opener([] {
    const CallUnderWay call([] { return true; });
    call.op_opened(2);
    call.op_opened(2);
  });
  opener.join();  // its mark goes back for reuse, its count stays
  EXPECT_EQ(ops_open(2), before + 2);
  std::thread closer([] {
    const CallUnderWay call([] { return true; });
    call.op_closed(2);
  });
  closer.join();
  EXPECT_EQ(ops_open(2), before + 1);
  {
    const CallUnderWay call([] { return true; });
    call.op_closed(2);
  }
  EXPECT_EQ(ops_open(2), before);
  EXPECT_EQ(ops_open(1), 0);
}

// A forked child keeps the ops of the thread that forked (they may end
// there) and forgets the other threads' (they are not in the child).
TEST(CallsUnderWay, AForkedChildForgetsTheOtherThreadsOps) {
  prepare_calls_under_way();
  const std::int64_t before = ops_open(3);
  {
    const CallUnderWay call([] { return true; });
    call.op_opened(3);
  }
  std::atomic<bool> opened{false};
  std::atomic<bool> done{false};
  std::thread other([&] {
    {
      const CallUnderWay call([] { return true; });
      call.op_opened(3);
    }
    opened.store(true);
    while (!done.load()) std::this_thread::yield();
  });
  while (!opened.load()) std::this_thread::yield();
  ASSERT_EQ(ops_open(3), before + 2);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    forget_calls_in_child();
    prepare_calls_under_way();  // registers membarrier for the child
    wait_for_calls_under_way();
    _exit(ops_open(3) == before + 1 ? 0 : 1);
  }
  int status = 0;
  waitpid(child, &status, 0);
  done.store(true);
  other.join();
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the child counted the other thread's op, or none";
  {
    const CallUnderWay call([] { return true; });
    call.op_closed(3);
    call.op_closed(3);
  }
  EXPECT_EQ(ops_open(3), before);
}

}  // namespace
}  // namespace regiontrace::torch_profiler
