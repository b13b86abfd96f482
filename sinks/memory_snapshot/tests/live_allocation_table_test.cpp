#include "live_allocation_table.hpp"

#include <gtest/gtest.h>

#include <random>
#include <thread>
#include <unordered_map>

namespace regiontrace::memory {
namespace {

LiveAllocation at(std::uintptr_t address, std::int64_t bytes, int path = 2) {
  LiveAllocation a;
  a.address = address;
  a.bytes = bytes;
  a.path = path;
  a.step = 7;
  return a;
}

TEST(LiveAllocationTable, InsertEraseAndCopy) {
  LiveAllocationTable t(100);
  EXPECT_EQ(t.insert(at(0x1000, 10), nullptr), LiveAllocationTable::InsertResult::kInserted);
  EXPECT_EQ(t.insert(at(0x2000, 20), nullptr), LiveAllocationTable::InsertResult::kInserted);
  EXPECT_EQ(t.size(), 2u);
  LiveAllocation removed;
  ASSERT_TRUE(t.erase(0x1000, &removed));
  EXPECT_EQ(removed.bytes, 10);
  EXPECT_EQ(removed.step, 7);
  EXPECT_FALSE(t.erase(0x1000, &removed));
  EXPECT_FALSE(t.erase(0x3000, &removed));
  const auto all = t.copy();
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].address, 0x2000u);
}

TEST(LiveAllocationTable, AnAddressSeenAgainReplacesTheStaleEntry) {
  LiveAllocationTable t(100);
  t.insert(at(0x1000, 10, 3), nullptr);
  LiveAllocation replaced;
  EXPECT_EQ(t.insert(at(0x1000, 50, 4), &replaced), LiveAllocationTable::InsertResult::kReplaced);
  EXPECT_EQ(replaced.bytes, 10);
  EXPECT_EQ(replaced.path, 3);
  EXPECT_EQ(t.size(), 1u);
}

TEST(LiveAllocationTable, BoundedByMaxEntries) {
  LiveAllocationTable t(5);
  int full = 0;
  for (std::uintptr_t i = 1; i <= 8; ++i) {
    full += t.insert(at(i * 64, 1), nullptr) == LiveAllocationTable::InsertResult::kFull;
  }
  EXPECT_EQ(full, 3);
  EXPECT_EQ(t.size(), 5u);
  EXPECT_TRUE(t.erase(64, nullptr));
  EXPECT_EQ(t.insert(at(9 * 64, 1), nullptr), LiveAllocationTable::InsertResult::kInserted);
}

TEST(LiveAllocationTable, RandomOperationsAgreeWithAMap) {
  // Dense, colliding addresses exercise probing and backward-shift deletion.
  LiveAllocationTable t(4000);
  std::unordered_map<std::uintptr_t, std::int64_t> model;
  std::mt19937_64 rng(42);
  for (int i = 0; i < 200000; ++i) {
    const std::uintptr_t address = 16 * (1 + rng() % 3000);
    if (rng() % 2 == 0) {
      const std::int64_t bytes = static_cast<std::int64_t>(rng() % 1000) + 1;
      const auto r = t.insert(at(address, bytes), nullptr);
      ASSERT_NE(r, LiveAllocationTable::InsertResult::kFull);
      EXPECT_EQ(r == LiveAllocationTable::InsertResult::kReplaced, model.count(address) == 1);
      model[address] = bytes;
    } else {
      LiveAllocation removed;
      const bool found = t.erase(address, &removed);
      ASSERT_EQ(found, model.count(address) == 1) << "at operation " << i;
      if (found) {
        EXPECT_EQ(removed.bytes, model[address]);
        model.erase(address);
      }
    }
  }
  EXPECT_EQ(t.size(), model.size());
  for (const LiveAllocation& a : t.copy()) EXPECT_EQ(model.at(a.address), a.bytes);
}

TEST(LiveAllocationTable, ConcurrentInsertsAndErases) {
  LiveAllocationTable t(100000);
  std::vector<std::thread> threads;
  for (int k = 0; k < 4; ++k) {
    threads.emplace_back([&t, k] {
      for (std::uintptr_t i = 0; i < 20000; ++i) {
        const std::uintptr_t address = (static_cast<std::uintptr_t>(k) << 40) + 64 * (i + 1);
        t.insert(at(address, 1), nullptr);
        if (i % 2 == 0) t.erase(address, nullptr);
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(t.size(), 4u * 10000u);
  EXPECT_EQ(t.copy().size(), 4u * 10000u);
}

}  // namespace
}  // namespace regiontrace::memory
