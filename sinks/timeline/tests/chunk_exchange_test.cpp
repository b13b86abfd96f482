// ChunkExchange alone, with the test as the writer: when an application
// thread wakes the writer (the futex wake it pays) and when it leaves a
// polling writer to find the chunk by itself.
#include "../chunk_exchange.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <thread>

namespace regiontrace::timeline {
namespace {

// Fills `c` with one record's worth of bytes, so that trade() queues it.
void fill(Chunk* c) {
  c->used.store(sizeof(RegionRecord), std::memory_order_relaxed);
}

bool eventually(const std::function<bool()>& done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

TEST(ChunkExchange, AWriterThatHasNotSleptIsWokenOnlyAtAQuarterOfTheChunks) {
  ChunkExchange exchange(16);  // a quarter: 4 queued chunks
  Chunk* current = nullptr;
  ASSERT_TRUE(exchange.trade(current, 0));  // the first chunk, nothing queued
  ASSERT_NE(current, nullptr);
  for (int queued = 1; queued <= 3; ++queued) {
    fill(current);
    ASSERT_TRUE(exchange.trade(current, 0));
    EXPECT_EQ(exchange.wakes(), 0u) << queued << " queued";
  }
  fill(current);
  ASSERT_TRUE(exchange.trade(current, 0));
  EXPECT_EQ(exchange.wakes(), 1u);
  EXPECT_EQ(exchange.made(), 5u);
  exchange.close();
  int drained = 0;
  while (Chunk* c = exchange.next_full()) {
    exchange.give_back(c);
    ++drained;
  }
  EXPECT_EQ(drained, 4);
}

TEST(ChunkExchange, AThreadLeftWithoutAChunkWakesTheWriter) {
  ChunkExchange small(1);
  Chunk* current = nullptr;
  ASSERT_TRUE(small.trade(current, 0));
  fill(current);
  ASSERT_TRUE(small.trade(current, 0));  // the only chunk queued, none left
  EXPECT_EQ(current, nullptr);
  EXPECT_TRUE(small.exhausted());
  EXPECT_EQ(small.wakes(), 1u);
  ASSERT_TRUE(small.trade(current, 0));  // still none: asks again
  EXPECT_EQ(small.wakes(), 2u);
  Chunk* c = small.next_full();
  ASSERT_NE(c, nullptr);
  small.give_back(c);
  EXPECT_FALSE(small.exhausted());
  ASSERT_TRUE(small.trade(current, 0));
  EXPECT_EQ(current, c);
}

TEST(ChunkExchange, APollingWriterFindsChunksUnwokenAndAnIdleOneSleepsUntilWoken) {
  ChunkExchange exchange(1024);
  std::atomic<int> written{0};
  std::thread writer([&] {
    while (Chunk* c = exchange.next_full()) {
      written.fetch_add(1);
      exchange.give_back(c);
    }
  });
  // Idle from the start: after its empty polls it waits to be woken.
  ASSERT_TRUE(eventually([&] { return exchange.writer_asleep(); }));
  Chunk* current = nullptr;
  ASSERT_TRUE(exchange.trade(current, 0));
  fill(current);
  ASSERT_TRUE(exchange.trade(current, 0));
  EXPECT_EQ(exchange.wakes(), 1u);
  ASSERT_TRUE(eventually([&] { return written.load() == 1; }));
  // Busy now: it polls, so chunks queued within its polls wake nothing.
  fill(current);
  ASSERT_TRUE(exchange.trade(current, 0));
  ASSERT_TRUE(eventually([&] { return written.load() == 2; }));
  // The chunk above came while the writer polled, or after it fell asleep
  // (a slow machine): at most one more wake, never one per chunk.
  EXPECT_LE(exchange.wakes(), 2u);
  exchange.close();
  writer.join();
  EXPECT_EQ(written.load(), 2);
}

}  // namespace
}  // namespace regiontrace::timeline
