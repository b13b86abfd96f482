#include "live_allocation_table.hpp"

#include <gtest/gtest.h>

#include <random>
#include <thread>
#include <unordered_map>
#include <vector>

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

TEST(LiveAllocationTable, KeepsTheBytesEachPathHolds) {
  LiveAllocationTable t(100000, 8);
  for (std::uintptr_t i = 1; i <= 1000; ++i) t.insert(at(i * 64, 10, 3), nullptr);
  t.insert(at(0x100000, 7, 5), nullptr);
  EXPECT_EQ(t.live_bytes(3), 10000);
  EXPECT_EQ(t.live_bytes(5), 7);
  EXPECT_EQ(t.live_bytes(4), 0);
  // A replaced entry's bytes move from its path to the new one's.
  t.insert(at(64, 100, 5), nullptr);
  EXPECT_EQ(t.live_bytes(3), 9990);
  EXPECT_EQ(t.live_bytes(5), 107);
  for (std::uintptr_t i = 2; i <= 1000; ++i) t.erase(i * 64, nullptr);
  EXPECT_EQ(t.live_bytes(3), 0);
  EXPECT_TRUE(t.erase(64, nullptr));
  EXPECT_EQ(t.live_bytes(5), 7);
  // Paths beyond the bound are kept, not summed.
  EXPECT_EQ(t.insert(at(0x200000, 1, 8), nullptr), LiveAllocationTable::InsertResult::kInserted);
  EXPECT_EQ(t.live_bytes(8), 0);
  EXPECT_EQ(t.size(), 2u);
}

TEST(LiveAllocationTable, ClearEmptiesTheTableAndItsPathFigures) {
  LiveAllocationTable t(100000, 8);
  for (std::uintptr_t i = 1; i <= 1000; ++i) t.insert(at(i * 64, 10, 3), nullptr);
  t.clear();
  EXPECT_EQ(t.size(), 0u);
  EXPECT_EQ(t.live_bytes(3), 0);
  EXPECT_TRUE(t.copy().empty());
  // Still usable (the mapping stays).
  EXPECT_EQ(t.insert(at(64, 10, 3), nullptr), LiveAllocationTable::InsertResult::kInserted);
  EXPECT_EQ(t.live_bytes(3), 10);
}

TEST(LiveAllocationTable, ARecycledTableIsHandedOutEmpty) {
  LiveAllocationTable& a = LiveAllocationTable::acquire(4321, 8);
  a.insert(at(64, 10, 3), nullptr);
  LiveAllocationTable::recycle(a);
  a.insert(at(128, 10, 3), nullptr);  // a late caller of the closed instance
  LiveAllocationTable& b = LiveAllocationTable::acquire(4321, 8);
  EXPECT_EQ(&a, &b);
  EXPECT_EQ(b.size(), 0u);
  EXPECT_EQ(b.live_bytes(3), 0);
  LiveAllocationTable::recycle(b);
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

TEST(LiveAllocationTable, PackedAndMarchingAddressesAgreeWithAMap) {
  // What allocators do: 64-byte allocations packed page after page (whole
  // windows of the table full), the oldest freed first or at random.
  LiveAllocationTable t(1000);
  std::unordered_map<std::uintptr_t, std::int64_t> model;
  std::vector<std::uintptr_t> live;
  std::mt19937_64 rng(7);
  std::uintptr_t next = 0x7f0000001000;
  for (int i = 0; i < 100000; ++i) {
    if (live.size() < 900 && rng() % 3 != 0) {
      const std::int64_t bytes = static_cast<std::int64_t>(rng() % 1000) + 1;
      ASSERT_EQ(t.insert(at(next, bytes), nullptr), LiveAllocationTable::InsertResult::kInserted)
          << "at operation " << i;
      model[next] = bytes;
      live.push_back(next);
      next += 64;
    } else if (!live.empty()) {
      const std::size_t k = rng() % 2 == 0 ? 0 : rng() % live.size();
      LiveAllocation removed;
      ASSERT_TRUE(t.erase(live[k], &removed)) << "at operation " << i;
      EXPECT_EQ(removed.bytes, model.at(live[k]));
      model.erase(live[k]);
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(k));
    }
  }
  EXPECT_EQ(t.size(), model.size());
  for (const LiveAllocation& a : t.copy()) EXPECT_EQ(model.at(a.address), a.bytes);
  // Filled to the bound with packed pages: the bound holds, nothing is lost.
  while (live.size() < 1000) {
    ASSERT_EQ(t.insert(at(next, 1), nullptr), LiveAllocationTable::InsertResult::kInserted);
    live.push_back(next);
    next += 64;
  }
  EXPECT_EQ(t.insert(at(next, 1), nullptr), LiveAllocationTable::InsertResult::kFull);
  for (const std::uintptr_t address : live) EXPECT_TRUE(t.erase(address, nullptr));
  EXPECT_EQ(t.size(), 0u);
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
  EXPECT_EQ(t.live_bytes(2), 4 * 10000);
}

}  // namespace
}  // namespace regiontrace::memory
