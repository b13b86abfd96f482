#include "regiontrace/sdk/bounded_queue_writer.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

namespace {

using regiontrace::sdk::BoundedQueueWriter;
using regiontrace::sdk::OnFull;
using Writer = BoundedQueueWriter<int>;

// A writer whose callback waits on a gate: the queue fills behind it.
struct Gate {
  std::mutex m;
  std::condition_variable cv;
  bool open = false;
  void wait() {
    std::unique_lock<std::mutex> l(m);
    cv.wait(l, [&] { return open; });
  }
  void release() {
    {
      std::lock_guard<std::mutex> l(m);
      open = true;
    }
    cv.notify_all();
  }
};

Writer::Options options(std::size_t capacity, OnFull on_full) {
  Writer::Options o;
  o.capacity = capacity;
  o.on_full = on_full;
  o.wake_batch = 1;
  o.idle_wakeup = std::chrono::milliseconds(5);
  return o;
}

TEST(BoundedQueueWriter, DropCountsWhatDoesNotFit) {
  Gate gate;
  std::vector<int> seen;
  std::atomic<bool> in_write{false};
  Writer w(options(4, OnFull::kDrop), [&](std::vector<int>& batch) {
    in_write = true;
    gate.wait();
    seen.insert(seen.end(), batch.begin(), batch.end());
  });
  ASSERT_TRUE(w.push(-1));  // taken by the writer, which then waits on the gate
  while (!in_write) std::this_thread::yield();
  int accepted = 0;
  for (int i = 0; i < 10; ++i) accepted += w.push(int{i}) ? 1 : 0;
  EXPECT_EQ(accepted, 4);
  EXPECT_EQ(w.dropped(), 6u);
  gate.release();
  EXPECT_TRUE(w.flush());
  w.close();
  EXPECT_EQ(seen, (std::vector<int>{-1, 0, 1, 2, 3}));
  EXPECT_EQ(w.written(), 5u);
}

TEST(BoundedQueueWriter, BlockLosesNothing) {
  std::vector<int> seen;
  Writer w(options(2, OnFull::kBlock), [&](std::vector<int>& batch) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    seen.insert(seen.end(), batch.begin(), batch.end());
  });
  std::vector<std::thread> producers;
  for (int t = 0; t < 4; ++t) {
    producers.emplace_back([&w, t] {
      for (int i = 0; i < 200; ++i) EXPECT_TRUE(w.push(t * 1000 + i));
    });
  }
  for (auto& p : producers) p.join();
  w.close();
  EXPECT_EQ(seen.size(), 800u);
  EXPECT_EQ(w.dropped(), 0u);
  EXPECT_EQ(w.written(), 800u);
}

TEST(BoundedQueueWriter, StampNumbersEveryOfferDropsLeaveGaps) {
  Gate gate;
  std::atomic<bool> in_write{false};
  std::vector<std::uint64_t> stamps;
  BoundedQueueWriter<std::uint64_t> w({1, OnFull::kDrop, std::chrono::milliseconds(5), 1, false},
                                      [&](std::vector<std::uint64_t>& batch) {
                                        in_write = true;
                                        gate.wait();
                                        stamps.insert(stamps.end(), batch.begin(), batch.end());
                                      });
  auto stamp = [](std::uint64_t& item, std::uint64_t n) { item = n; };
  EXPECT_TRUE(w.push(0, stamp));
  while (!in_write) std::this_thread::yield();
  EXPECT_TRUE(w.push(0, stamp));   // fills the queue
  EXPECT_FALSE(w.push(0, stamp));  // dropped, number 2 used up
  gate.release();
  w.flush();
  EXPECT_TRUE(w.push(0, stamp));
  w.close();
  EXPECT_EQ(stamps, (std::vector<std::uint64_t>{0, 1, 3}));
}

TEST(BoundedQueueWriter, ManyProducersAgainstAWriterLoseNothingAndStampInQueueOrder) {
  // Producers race the writer's swaps and its waits: with OnFull::kBlock
  // every item arrives once, numbered in the order the writer sees them.
  constexpr int kThreads = 4;
  constexpr std::uint64_t kEach = 20000;
  std::vector<std::uint64_t> stamps;
  BoundedQueueWriter<std::uint64_t> w({64, OnFull::kBlock, std::chrono::milliseconds(1), 16, false},
                                      [&](std::vector<std::uint64_t>& batch) {
                                        stamps.insert(stamps.end(), batch.begin(), batch.end());
                                      });
  std::vector<std::thread> producers;
  for (int t = 0; t < kThreads; ++t) {
    producers.emplace_back([&] {
      for (std::uint64_t i = 0; i < kEach; ++i) {
        ASSERT_TRUE(w.push(0, [](std::uint64_t& item, std::uint64_t n) { item = n; }));
        if (i % 1000 == 0) w.request_flush();
      }
    });
  }
  for (std::thread& p : producers) p.join();
  EXPECT_TRUE(w.flush());
  w.close();
  ASSERT_EQ(stamps.size(), kThreads * kEach);
  for (std::uint64_t i = 0; i < stamps.size(); ++i) ASSERT_EQ(stamps[i], i) << "at " << i;
  EXPECT_EQ(w.dropped(), 0u);
  EXPECT_EQ(w.refused(), 0u);
  EXPECT_EQ(w.written(), kThreads * kEach);
}

TEST(BoundedQueueWriter, FirstErrorIsStickyAndLaterPushesAreRefused) {
  int calls = 0;
  Writer w(options(100, OnFull::kBlock), [&](std::vector<int>&) {
    ++calls;
    throw std::runtime_error(calls == 1 ? "disk full" : "second error");
  });
  EXPECT_TRUE(w.push(1));
  EXPECT_FALSE(w.flush());
  EXPECT_TRUE(w.failed());
  EXPECT_EQ(w.error(), "disk full");
  EXPECT_FALSE(w.push(2));
  EXPECT_FALSE(w.push(3));
  EXPECT_EQ(w.refused(), 2u);
  w.fail("later");
  w.close();
  EXPECT_EQ(w.error(), "disk full");
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(w.written(), 0u);
}

TEST(BoundedQueueWriter, FlushSyncsAndCloseWritesTheRest) {
  std::vector<int> seen;
  int syncs = 0;
  Writer::Options o = options(1000, OnFull::kBlock);
  o.wake_batch = 1000;
  o.idle_wakeup = std::chrono::hours(1);  // only flush and close wake it
  Writer w(
      o, [&](std::vector<int>& batch) { seen.insert(seen.end(), batch.begin(), batch.end()); },
      [&] { ++syncs; });
  w.push(1);
  w.push(2);
  EXPECT_TRUE(w.flush());
  EXPECT_EQ(seen.size(), 2u);
  EXPECT_EQ(syncs, 1);
  w.push(3);
  w.close();
  EXPECT_EQ(seen, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(syncs, 2);
  EXPECT_FALSE(w.push(4));
  EXPECT_EQ(w.refused(), 1u);
}

TEST(BoundedQueueWriter, ThreadStartsOnFirstPushWhenAsked) {
  int batches = 0;
  Writer::Options o = options(10, OnFull::kBlock);
  o.start_on_first_push = true;
  {
    Writer idle(o, [&](std::vector<int>&) { ++batches; });
    idle.close();
  }
  EXPECT_EQ(batches, 0);
  Writer used(o, [&](std::vector<int>&) { ++batches; });
  used.push(1);
  used.close();
  EXPECT_EQ(batches, 1);
}

TEST(BoundedQueueWriter, BeyondCapacityNeverWaitsNorDrops) {
  Gate gate;
  std::atomic<bool> in_write{false};
  std::vector<int> seen;
  Writer w(options(1, OnFull::kDrop), [&](std::vector<int>& batch) {
    in_write = true;
    gate.wait();
    seen.insert(seen.end(), batch.begin(), batch.end());
  });
  w.push(0);
  while (!in_write) std::this_thread::yield();
  w.push(1);
  EXPECT_FALSE(w.push(2));
  EXPECT_TRUE(w.push_beyond_capacity(3));
  gate.release();
  w.close();
  EXPECT_EQ(seen, (std::vector<int>{0, 1, 3}));
}

}  // namespace
