// The SDK's per-thread table: found by thread number without a lock, made
// once per number with the identity every sink names threads by, taken out
// by remove(), and readable from other threads while threads add entries.
#include <gtest/gtest.h>
#include <pthread.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "regiontrace/sdk/thread_table.hpp"

namespace {

using regiontrace::sdk::ThreadIdentity;
using regiontrace::sdk::ThreadTable;

struct Counter : ThreadIdentity {
  explicit Counter(int start = 0) : value(start) {}
  int value;
};

TEST(ThreadTable, AnEntryIsMadeOnceAndFoundByItsNumber) {
  ThreadTable<Counter> table;
  EXPECT_EQ(table.find(3), nullptr);
  Counter* made = table.create(3, regiontrace::sdk::this_thread_os_tid(), 7);
  ASSERT_NE(made, nullptr);
  EXPECT_EQ(made->value, 7);
  EXPECT_EQ(made->number, 3u);
  EXPECT_EQ(made->index, 0u);
  EXPECT_EQ(made->os_tid, regiontrace::sdk::this_thread_os_tid());
  EXPECT_EQ(table.find(3), made);
  EXPECT_EQ(table.create(3, 1, 99), made) << "a second create finds the first";
  EXPECT_EQ(made->value, 7);
  // Numbers far apart land on pages of their own; past the table, none.
  Counter* far = table.create((std::uint64_t{1} << 22) + 5, 1);
  ASSERT_NE(far, nullptr);
  EXPECT_EQ(far->index, 1u);
  EXPECT_EQ(table.find((std::uint64_t{1} << 22) + 5), far);
  EXPECT_EQ(table.find((std::uint64_t{1} << 22) + 6), nullptr);
  EXPECT_EQ(table.create(std::uint64_t{1} << 23, 1), nullptr);
  EXPECT_EQ(table.find(std::uint64_t{1} << 40), nullptr);
  EXPECT_EQ(table.all(), (std::vector<Counter*>{made, far}));
}

TEST(ThreadTable, RemoveTakesTheEntryOut) {
  ThreadTable<Counter> table;
  Counter* a = table.create(1, 1);
  Counter* b = table.create(2, 1);
  std::unique_ptr<Counter> taken = table.remove(1);
  EXPECT_EQ(taken.get(), a);
  EXPECT_EQ(table.find(1), nullptr);
  EXPECT_EQ(table.remove(1), nullptr);
  EXPECT_EQ(table.remove(77), nullptr);
  EXPECT_EQ(table.all(), std::vector<Counter*>{b});
  EXPECT_EQ(table.size(), 1u);
}

// One rule for every sink: the name the thread set, else "thread <tid>".
TEST(ThreadTable, ThreadsAreNamedAsTheyNamedThemselves) {
  ThreadTable<Counter> table;
  std::string named, unnamed;
  std::thread([&] {
    pthread_setname_np(pthread_self(), "loader");
    named = table.create(10, regiontrace::sdk::this_thread_os_tid())->name;
  }).join();
  long tid = 0;
  std::thread([&] {
    // A name nobody set is the process's, inherited: blank it to see the fallback.
    pthread_setname_np(pthread_self(), "");
    tid = regiontrace::sdk::this_thread_os_tid();
    unnamed = table.create(11, tid)->name;
  }).join();
  EXPECT_EQ(named, "loader");
  EXPECT_EQ(unnamed, "thread " + std::to_string(tid));
}

// Threads make their own entries while another reads: every reader sees
// either no entry or a whole one (the race is TSan's to judge).
TEST(ThreadTable, ThreadsMakeEntriesWhileAnotherReads) {
  ThreadTable<Counter> table;
  std::atomic<bool> done{false};
  std::thread reader([&] {
    while (!done.load()) {
      for (Counter* c : table.all()) EXPECT_EQ(c->value, static_cast<int>(c->number));
      for (std::uint64_t n = 0; n < 4 * 300; n += 37) {
        if (Counter* c = table.find(n)) EXPECT_EQ(c->value, static_cast<int>(n));
      }
    }
  });
  std::vector<std::thread> writers;
  for (int w = 0; w < 4; ++w) {
    writers.emplace_back([&table, w] {
      for (int i = 0; i < 300; ++i) {
        const std::uint64_t n = static_cast<std::uint64_t>(w * 300 + i);
        table.create(n, 1, static_cast<int>(n));
      }
    });
  }
  for (std::thread& t : writers) t.join();
  done = true;
  reader.join();
  EXPECT_EQ(table.size(), 1200u);
  for (std::uint64_t n = 0; n < 1200; ++n) ASSERT_NE(table.find(n), nullptr) << n;
}

}  // namespace
