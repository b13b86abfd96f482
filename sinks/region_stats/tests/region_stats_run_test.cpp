// The built sink under real runs: regions with known sleeps, nesting,
// threads and steps, read back from region_stats_rank0_pid<p>.json.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <malloc.h>
#include <unistd.h>

#include <chrono>
#include <sstream>
#include <thread>

#include "log_histogram.hpp"
#include "stats_test_support.hpp"
#include "test_support.hpp"
#include "thread_stats_registry.hpp"

namespace regiontrace::region_stats::test {
namespace {

using Clock = std::chrono::steady_clock;
using regiontrace::test::CleanEnv;
using regiontrace::test::TempDir;

std::int64_t ns_since(Clock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count();
}

void sleep_ms(double ms) {
  std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(ms));
}

TEST(RegionStatsRun, FiveSleepsGiveCountTotalAndPercentilesOfTheRun) {
  CleanEnv env;
  TempDir dir;
  init(stats_options(dir.path()));
  const auto wall0 = Clock::now();
  std::vector<std::int64_t> outer_ns;  // each region measured from outside it
  for (int i = 0; i < 5; ++i) {
    const auto t0 = Clock::now();
    {
      RT_REGION("sleep_2ms");
      sleep_ms(2);
    }
    outer_ns.push_back(ns_since(t0));
  }
  const std::int64_t wall_ns = ns_since(wall0);
  shutdown();

  const json doc = read_stats_json(dir.path());
  const json* r = region(doc.at("regions"), "sleep_2ms");
  ASSERT_NE(r, nullptr) << doc.dump(1);
  EXPECT_EQ(r->at("count"), 5);
  EXPECT_EQ(r->at("depth"), 0);
  EXPECT_EQ(r->at("threads"), 1);
  const std::int64_t total = r->at("total_ns");
  EXPECT_GE(total, 5 * 2000000);
  EXPECT_LE(total, wall_ns);
  EXPECT_EQ(r->at("self_ns"), total);  // no children
  EXPECT_EQ(r->at("mean_ns"), total / 5);
  const std::int64_t min = r->at("min_ns");
  const std::int64_t max = r->at("max_ns");
  const std::int64_t p50 = r->at("p50_ns");
  EXPECT_GE(min, 2000000);
  EXPECT_LE(min, p50);
  EXPECT_LE(p50, r->at("p90_ns").get<std::int64_t>());
  EXPECT_LE(r->at("p90_ns").get<std::int64_t>(), r->at("p99_ns").get<std::int64_t>());
  EXPECT_LE(r->at("p99_ns").get<std::int64_t>(), max);
  std::sort(outer_ns.begin(), outer_ns.end());
  // The median seen by the sink is at most the median measured around the
  // regions, and percentiles are within the histogram's error of it.
  const double err = LogBuckets::kRelativeError;
  EXPECT_LE(static_cast<double>(p50), static_cast<double>(outer_ns[2]) * (1 + err));
  EXPECT_GE(static_cast<double>(p50), 2e6 * (1 - err));
  EXPECT_LE(max, outer_ns[4]);
  EXPECT_GT(doc.at("wall_ns").get<std::int64_t>(), total);
  EXPECT_DOUBLE_EQ(doc.at("histogram").at("relative_error").get<double>(), err);
}

TEST(RegionStatsRun, NestedPathsHaveSelfTimeTotalMinusChildren) {
  CleanEnv env;
  TempDir dir;
  init(stats_options(dir.path(), {{"table", "file"}}));
  for (int i = 0; i < 2; ++i) {
    RT_REGION("outer");
    sleep_ms(2);
    for (int j = 0; j < 3; ++j) {
      RT_REGION("inner");
      sleep_ms(1);
      RT_REGION("leaf");
    }
  }
  shutdown();
  const json doc = read_stats_json(dir.path());
  const json& regions = doc.at("regions");
  const json* outer = region(regions, "outer");
  const json* inner = region(regions, "outer/inner");
  const json* leaf = region(regions, "outer/inner/leaf");
  ASSERT_TRUE(outer && inner && leaf) << doc.dump(1);
  EXPECT_EQ(outer->at("count"), 2);
  EXPECT_EQ(inner->at("count"), 6);
  EXPECT_EQ(leaf->at("count"), 6);
  EXPECT_EQ(inner->at("depth"), 1);
  EXPECT_EQ(leaf->at("depth"), 2);
  EXPECT_EQ(inner->at("name"), "inner");
  EXPECT_EQ(outer->at("self_ns").get<std::int64_t>(),
            outer->at("total_ns").get<std::int64_t>() - inner->at("total_ns").get<std::int64_t>());
  EXPECT_EQ(inner->at("self_ns").get<std::int64_t>(),
            inner->at("total_ns").get<std::int64_t>() - leaf->at("total_ns").get<std::int64_t>());
  EXPECT_GE(outer->at("self_ns").get<std::int64_t>(), 2 * 2000000);
  EXPECT_GE(inner->at("total_ns").get<std::int64_t>(), 6 * 1000000);
  // Sorted by total time.
  EXPECT_EQ(regions.at(0).at("path"), "outer");

  const std::string table = regiontrace::test::read_file(
      dir.file("region_stats_rank0_pid" + std::to_string(::getpid()) + ".txt"));
  EXPECT_NE(table.find("\n  outer "), std::string::npos) << table;
  EXPECT_NE(table.find("\n    inner "), std::string::npos) << table;
  EXPECT_NE(table.find("\n      leaf "), std::string::npos) << table;
  EXPECT_NE(table.find("p99"), std::string::npos) << table;
}

TEST(RegionStatsRun, ThreadsAreCountedApartAndMerged) {
  CleanEnv env;
  TempDir dir;
  init(stats_options(dir.path()));
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t] {
      for (int i = 0; i < 10 + t; ++i) {
        RT_REGION("worker");
        sleep_ms(0.2);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  shutdown();
  const json doc = read_stats_json(dir.path());
  const json* w = region(doc.at("regions"), "worker");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->at("count"), 10 + 11 + 12 + 13);
  EXPECT_EQ(w->at("threads"), 4);
  std::vector<int> per_thread;
  std::int64_t total = 0;
  for (const json& t : doc.at("threads")) {
    const json* tw = region(t.at("regions"), "worker");
    if (tw == nullptr) continue;
    per_thread.push_back(tw->at("count"));
    total += tw->at("total_ns").get<std::int64_t>();
  }
  std::sort(per_thread.begin(), per_thread.end());
  EXPECT_EQ(per_thread, (std::vector<int>{10, 11, 12, 13}));
  EXPECT_EQ(total, w->at("total_ns").get<std::int64_t>());
}

// A pool that makes a thread per task: memory follows the live threads,
// not every thread the run made (it was ~131 KB per thread ever created),
// and the merged numbers still count every finished thread.
TEST(RegionStatsRun, ThreadChurnKeepsMemoryBounded) {
  CleanEnv env;
  TempDir dir;
  init(stats_options(dir.path()));
  auto heap_in_use = [] {
    const struct mallinfo2 m = ::mallinfo2();
    return static_cast<double>(m.uordblks + m.hblkhd);
  };
  auto churn = [](int threads) {
    for (int i = 0; i < threads; ++i) {
      std::thread([] {
        for (int k = 0; k < 3; ++k) {
          RT_REGION("task");
          { RT_REGION("load"); }
          { RT_REGION("compute"); }
        }
      }).join();
    }
  };
  constexpr int kThreads = 1000;
  churn(kThreads);  // the paths' folded totals and the kept threads exist from here on
  ::malloc_trim(0);
  const double before = heap_in_use();
  churn(kThreads);
  ::malloc_trim(0);
  const double per_thread = (heap_in_use() - before) / kThreads;
  shutdown();
  EXPECT_LT(per_thread, 2048.0) << "heap bytes kept per finished thread";
  std::printf("heap %+.0f B per finished thread\n", per_thread);

  const json doc = read_stats_json(dir.path());
  for (const char* path : {"task", "task/load", "task/compute"}) {
    const json* r = region(doc.at("regions"), path);
    ASSERT_NE(r, nullptr) << path;
    EXPECT_EQ(r->at("count"), 3 * 2 * kThreads) << path;
    EXPECT_EQ(r->at("threads"), 2 * kThreads) << path;
  }
  const std::size_t kept = doc.at("threads").size();
  EXPECT_LE(kept, ThreadRegistry::kKeptFinished);
  EXPECT_EQ(doc.at("threads_folded").get<std::size_t>() + kept, 2u * kThreads);
  // The per-thread rows kept and the folded totals add up to the merged row.
  std::int64_t kept_count = 0;
  for (const json& t : doc.at("threads")) {
    if (const json* tw = region(t.at("regions"), "task")) kept_count += tw->at("count").get<int>();
  }
  EXPECT_EQ(kept_count, 3 * static_cast<std::int64_t>(kept));
}

TEST(RegionStatsRun, StepsGetTheirOwnAggregatesBoundedByMaxSteps) {
  CleanEnv env;
  TempDir dir;
  init(stats_options(dir.path(), {{"max_steps", "3"}}));
  for (int step = 0; step < 5; ++step) {
    set_step(step);
    for (int i = 0; i <= step; ++i) {
      RT_REGION("step_work");
      sleep_ms(0.5);
    }
  }
  shutdown();
  const json doc = read_stats_json(dir.path());
  const json& steps = doc.at("steps");
  EXPECT_EQ(steps.at("max_steps"), 3);
  EXPECT_EQ(steps.at("steps_seen"), 5);
  const json& kept = steps.at("kept");
  ASSERT_EQ(kept.size(), 3u) << steps.dump(1);
  for (int i = 0; i < 3; ++i) {
    const json& s = kept.at(i);
    EXPECT_EQ(s.at("step"), i + 2);
    const json* w = region(s.at("regions"), "step_work");
    ASSERT_NE(w, nullptr);
    EXPECT_EQ(w->at("count"), i + 3);
    EXPECT_GE(w->at("total_ns").get<std::int64_t>(), (i + 3) * 500000);
    // The step's wall time holds its regions.
    EXPECT_GE(s.at("wall_ns").get<std::int64_t>(), w->at("total_ns").get<std::int64_t>());
  }
  EXPECT_EQ(region(doc.at("regions"), "step_work")->at("count"), 15);
}

TEST(RegionStatsRun, JsonCarriesTheSchemaAndClockSync) {
  CleanEnv env;
  TempDir dir;
  init(stats_options(dir.path()));
  { RT_REGION("one"); }
  shutdown();
  const json doc = read_stats_json(dir.path());
  EXPECT_EQ(doc.at("schemaVersion"), 1);
  EXPECT_EQ(doc.at("sink"), "region_stats");
  EXPECT_EQ(doc.at("rank"), 0);
  EXPECT_EQ(doc.at("pid"), ::getpid());
  const json& meta = doc.at("regiontrace");
  EXPECT_EQ(meta.at("sink"), "region_stats");
  EXPECT_EQ(meta.at("pid"), ::getpid());
  const json& sync = meta.at("clockSync");
  EXPECT_LE(sync.at("start").at("monotonic_ns").get<std::int64_t>(),
            sync.at("end").at("monotonic_ns").get<std::int64_t>());
  for (const char* key : {"path", "name", "depth", "threads", "count", "total_ns", "self_ns",
                          "mean_ns", "min_ns", "max_ns", "p50_ns", "p90_ns", "p99_ns"}) {
    EXPECT_TRUE(doc.at("regions").at(0).contains(key)) << key;
  }
  EXPECT_TRUE(doc.at("threads").is_array());
  // The step is the process's (an earlier test may have set one): each kept
  // row names it and holds the region run in it.
  for (const json& step : doc.at("steps").at("kept")) {
    EXPECT_EQ(step.at("step"), regiontrace::step());
    EXPECT_NE(region(step.at("regions"), "one"), nullptr);
  }
  EXPECT_EQ(doc.at("prometheus").at("listen"), "");
}

TEST(RegionStatsRun, TheTableGoesToStderrAtShutdown) {
  CleanEnv env;
  TempDir dir;
  const std::string err = dir.file("stderr.txt");
  const regiontrace::test::ChildResult child = regiontrace::test::run_in_child([&] {
    const int fd = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(fd, 2);
    init(stats_options(dir.path(), {{"table", "stderr"}, {"table_paths", "full"}}));
    for (int i = 0; i < 3; ++i) {
      RT_REGION("printed");
      RT_REGION("child");
      sleep_ms(1);
    }
    shutdown();
    return 0;
  });
  ASSERT_TRUE(child.exited);
  ASSERT_EQ(child.exit_code, 0);
  const std::string table = regiontrace::test::read_file(err);
  EXPECT_NE(table.find("region_stats: rank 0, pid " + std::to_string(child.pid)), std::string::npos)
      << table;
  std::istringstream lines(table);
  std::string line;
  std::vector<std::string> rows;
  while (std::getline(lines, line)) rows.push_back(line);
  ASSERT_GE(rows.size(), 4u) << table;
  // Header, then the rows by total: the parent first, the child by full path.
  EXPECT_EQ(rows[1].rfind("  region", 0), 0u) << table;
  EXPECT_EQ(rows[2].rfind("  printed ", 0), 0u) << table;
  EXPECT_EQ(rows[3].rfind("  printed/child ", 0), 0u) << table;
  // The count column: three of each.
  EXPECT_NE(rows[2].find(" 3 "), std::string::npos) << rows[2];
  EXPECT_NE(rows[3].find(" 3 "), std::string::npos) << rows[3];
}

}  // namespace
}  // namespace regiontrace::region_stats::test
