// ThreadStats fed with events whose times are chosen, so self time, nesting
// and per-step rows are checked to the nanosecond.
#include "thread_stats.hpp"

#include <gtest/gtest.h>

#include "path_summary.hpp"
#include "regiontrace/sdk/text_format.hpp"
#include "stats_report.hpp"
#include "stats_table.hpp"

namespace regiontrace::region_stats {
namespace {

struct Feeder {
  ThreadStats& stats;
  std::int64_t step = kNoStep;
  void begin(RegionId id, const std::string& name, const std::string& path, int depth,
             std::int64_t t) {
    RegionEvent e;
    e.id = id;
    e.name = name;
    e.path = path;
    e.depth = depth;
    e.step = step;
    e.time_ns = t;
    stats.begin(e);
  }
  void end(RegionId id, const std::string& name, const std::string& path, int depth,
           std::int64_t begin_t, std::int64_t t) {
    RegionEvent e;
    e.id = id;
    e.name = name;
    e.path = path;
    e.depth = depth;
    e.step = step;
    e.time_ns = t;
    e.begin_time_ns = begin_t;
    stats.end(e);
  }
};

const PathRecord* find(const std::vector<PathRecord>& v, const std::string& path) {
  for (const PathRecord& r : v) {
    if (r.path == path) return &r;
  }
  return nullptr;
}

TEST(ThreadStats, SelfTimeIsTotalMinusSelectedChildren) {
  ThreadStats s(1, {1000, 100000}, 10);
  Feeder f{s};
  // outer [0, 10000): inner [1000, 3000) and [4000, 7000), leaf in the second.
  f.begin(1, "outer", "outer", 0, 1);
  f.begin(2, "inner", "outer/inner", 1, 1000);
  f.end(2, "inner", "outer/inner", 1, 1000, 3000);
  f.begin(2, "inner", "outer/inner", 1, 4000);
  f.begin(3, "leaf", "outer/inner/leaf", 2, 5000);
  f.end(3, "leaf", "outer/inner/leaf", 2, 5000, 5500);
  f.end(2, "inner", "outer/inner", 1, 4000, 7000);
  f.end(1, "outer", "outer", 0, 1, 10001);
  const std::vector<PathRecord> r = s.snapshot();
  ASSERT_EQ(r.size(), 3u);
  const PathRecord* outer = find(r, "outer");
  const PathRecord* inner = find(r, "outer/inner");
  const PathRecord* leaf = find(r, "outer/inner/leaf");
  ASSERT_TRUE(outer && inner && leaf);
  EXPECT_EQ(outer->totals.count, 1u);
  EXPECT_EQ(outer->totals.total_ns, 10000);
  EXPECT_EQ(outer->totals.self_ns, 10000 - 5000);
  EXPECT_EQ(inner->totals.count, 2u);
  EXPECT_EQ(inner->totals.total_ns, 5000);
  EXPECT_EQ(inner->totals.self_ns, 5000 - 500);
  EXPECT_EQ(inner->totals.min_ns, 2000);
  EXPECT_EQ(inner->totals.max_ns, 3000);
  EXPECT_EQ(leaf->totals.self_ns, 500);
  EXPECT_EQ(leaf->depth, 2);
  // Prometheus bounds 1 us and 100 us: leaf <= 1 us, the rest in the second.
  EXPECT_EQ(leaf->bound_counts, (std::vector<std::uint64_t>{1, 0, 0}));
  EXPECT_EQ(inner->bound_counts, (std::vector<std::uint64_t>{0, 2, 0}));
}

TEST(ThreadStats, PathsThroughUnselectedRegionsStayApart) {
  ThreadStats s(1, {}, 0);
  Feeder f{s};
  // `x` and `y` are not selected: the sink sees `a` and `c` only.
  f.begin(1, "a", "a", 0, 10);
  f.begin(3, "c", "a/x/c", 2, 20);
  f.end(3, "c", "a/x/c", 2, 20, 30);
  f.begin(3, "c", "a/y/c", 2, 40);
  f.end(3, "c", "a/y/c", 2, 40, 70);
  f.end(1, "a", "a", 0, 10, 100);
  const std::vector<PathRecord> r = s.snapshot();
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(find(r, "a/x/c")->totals.total_ns, 10);
  EXPECT_EQ(find(r, "a/y/c")->totals.total_ns, 30);
  EXPECT_EQ(find(r, "a")->totals.self_ns, 90 - 40);
}

TEST(ThreadStats, PerStepRowsKeepTheLastMaxSteps) {
  ThreadStats s(1, {}, 3);
  Feeder f{s};
  std::int64_t t = 100;
  for (std::int64_t step = 0; step < 5; ++step) {
    f.step = step;
    for (int i = 0; i <= step; ++i) {
      f.begin(1, "work", "work", 0, t);
      f.end(1, "work", "work", 0, t, t + 10 * (step + 1));
      t += 1000;
    }
  }
  const std::vector<PathRecord> r = s.snapshot();
  ASSERT_EQ(r.size(), 1u);
  ASSERT_EQ(r[0].steps.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    const std::int64_t step = static_cast<std::int64_t>(i) + 2;
    EXPECT_EQ(r[0].steps[i].step, step);
    EXPECT_EQ(r[0].steps[i].totals.count, static_cast<std::uint64_t>(step + 1));
    EXPECT_EQ(r[0].steps[i].totals.total_ns, (step + 1) * 10 * (step + 1));
  }
  EXPECT_EQ(r[0].totals.count, 15u);
}

TEST(PathSummary, MergesThreadsAndSortsByTotal) {
  ThreadStats a(1, {}, 0);
  ThreadStats b(2, {}, 0);
  Feeder fa{a};
  Feeder fb{b};
  fa.begin(1, "x", "x", 0, 10);
  fa.end(1, "x", "x", 0, 10, 110);
  fb.begin(1, "x", "x", 0, 10);
  fb.end(1, "x", "x", 0, 10, 310);
  fb.begin(2, "y", "y", 0, 400);
  fb.end(2, "y", "y", 0, 400, 450);
  std::vector<PathRecord> all = a.snapshot();
  for (PathRecord& r : b.snapshot()) all.push_back(std::move(r));
  const StatsReport report = build_report(all);
  ASSERT_EQ(report.regions.size(), 2u);
  EXPECT_EQ(report.regions[0].path, "x");
  EXPECT_EQ(report.regions[0].threads, 2u);
  EXPECT_EQ(report.regions[0].totals.count, 2u);
  EXPECT_EQ(report.regions[0].totals.total_ns, 400);
  EXPECT_EQ(report.regions[0].totals.min_ns, 100);
  EXPECT_EQ(report.regions[0].totals.max_ns, 300);
  EXPECT_EQ(report.regions[1].path, "y");
  ASSERT_EQ(report.threads.size(), 2u);
  EXPECT_EQ(report.threads.at(2).size(), 2u);
}

TEST(StatsTable, IndentsChildrenUnderParentsOrPrintsFullPaths) {
  ThreadStats s(1, {}, 0);
  Feeder f{s};
  f.begin(1, "outer", "outer", 0, 1);
  f.begin(2, "inner", "outer/inner", 1, 10);
  f.end(2, "inner", "outer/inner", 1, 10, 2010);
  f.end(1, "outer", "outer", 0, 1, 5001);
  f.begin(3, "alone", "gone/alone", 1, 6000);
  f.end(3, "alone", "gone/alone", 1, 6000, 6100);
  StatsReport report = build_report(s.snapshot());
  report.wall_ns = 7000;
  const std::string indented = stats_table(report, TablePaths::kIndented);
  EXPECT_NE(indented.find("region"), std::string::npos);
  for (const char* column : {"count", "total", "self", "mean", "min", "max", "p50", "p90", "p99"}) {
    EXPECT_NE(indented.find(column), std::string::npos) << column;
  }
  const auto outer = indented.find("\n  outer ");
  const auto inner = indented.find("\n    inner ");
  // A path whose parent was not selected is shown in full, as a root.
  const auto alone = indented.find("\n  gone/alone ");
  ASSERT_NE(outer, std::string::npos) << indented;
  ASSERT_NE(inner, std::string::npos) << indented;
  ASSERT_NE(alone, std::string::npos) << indented;
  EXPECT_LT(outer, inner);
  EXPECT_NE(indented.find("5.00 us"), std::string::npos) << indented;  // outer total
  EXPECT_NE(indented.find("3.00 us"), std::string::npos) << indented;  // outer self
  const std::string full = stats_table(report, TablePaths::kFull);
  EXPECT_NE(full.find("\n  outer/inner "), std::string::npos) << full;
  EXPECT_EQ(sdk::text::duration(812), "812 ns");
  EXPECT_EQ(sdk::text::duration(2050000), "2.05 ms");
  EXPECT_EQ(sdk::text::duration(1234000000), "1.234 s");
}

// A region name is the application's text: an escape sequence in it is
// printed as an escape, not sent to the terminal.
TEST(StatsTable, ControlCharactersInNamesAreEscaped) {
  ThreadStats s(1, {}, 0);
  Feeder f{s};
  f.begin(1, "red\x1b[31m\nx", "red\x1b[31m\nx", 0, 1000);
  f.end(1, "red\x1b[31m\nx", "red\x1b[31m\nx", 0, 1000, 2000);
  StatsReport report = build_report(s.snapshot());
  report.wall_ns = 1000;
  for (const TablePaths paths : {TablePaths::kIndented, TablePaths::kFull}) {
    const std::string table = stats_table(report, paths);
    EXPECT_EQ(table.find('\x1b'), std::string::npos) << table;
    EXPECT_NE(table.find("red\\e[31m\\nx "), std::string::npos) << table;
  }
}

// Numbered siblings read in their numbers' order, at the place of the
// largest one; other siblings still by total. Each row says its share of
// the wall time.
TEST(StatsTable, NumberedSiblingsStayInNumericOrderWithTheirShareOfWall) {
  ThreadStats s(1, {}, 0);
  Feeder f{s};
  const std::int64_t start = 1000;
  std::int64_t t = start;
  f.begin(1, "step", "step", 0, t);
  // Totals: blocks.2 > blocks.10 > blocks.0 > blocks.1, and `head` between.
  const std::pair<const char*, std::int64_t> children[] = {
      {"blocks.0", 300}, {"blocks.1", 100}, {"blocks.2", 900}, {"blocks.10", 500}, {"head", 700}};
  RegionId id = 2;
  for (const auto& [name, ns] : children) {
    const std::string path = std::string("step/") + name;
    f.begin(id, name, path, 1, t);
    f.end(id, name, path, 1, t, t + ns);
    t += ns;
    ++id;
  }
  f.end(1, "step", "step", 0, start, t);
  StatsReport report = build_report(s.snapshot());
  report.wall_ns = 2 * (t - start);  // 5000 ns
  const std::string table = stats_table(report, TablePaths::kIndented);
  std::vector<std::size_t> at;
  for (const char* name : {"blocks.0 ", "blocks.1 ", "blocks.2 ", "blocks.10 ", "head "}) {
    at.push_back(table.find(std::string("\n    ") + name));
    ASSERT_NE(at.back(), std::string::npos) << name << "\n" << table;
  }
  EXPECT_LT(at[0], at[1]);
  EXPECT_LT(at[1], at[2]);
  EXPECT_LT(at[2], at[3]);  // 10 after 2: numbers, not text
  EXPECT_LT(at[3], at[4]);  // the group stands where blocks.2 (900 ns > head's 700) stands
  EXPECT_NE(table.find("% wall"), std::string::npos) << table;
  const auto step_row = table.find("\n  step ");
  ASSERT_NE(step_row, std::string::npos) << table;
  EXPECT_NE(table.find(" 50.0 ", step_row), std::string::npos) << table;  // 2500 of 5000 ns
  const auto head_row = table.find("\n    head ");
  EXPECT_NE(table.find(" 14.0 ", head_row), std::string::npos) << table;  // 700 of 5000 ns
}

}  // namespace
// begin() tries the child it found last and compares paths without memcmp:
// children that alternate, paths differing in one byte at any length, and
// nesting deeper than the frames it starts with must still land apart.
TEST(ThreadStats, AlternatingChildrenAndPathsOfEveryLengthStayApart) {
  ThreadStats s(1, {1000}, 0);
  Feeder f{s};
  std::vector<std::string> paths;
  for (std::size_t n = 1; n <= 40; ++n) {
    paths.push_back(std::string(n, 'p'));
    std::string last = std::string(n - 1, 'p') + 'q';   // differs in the last byte
    std::string first = 'q' + std::string(n - 1, 'p');  // differs in the first byte
    paths.push_back(last);
    if (first != last) paths.push_back(first);
  }
  std::int64_t t = 1;
  for (int round = 0; round < 3; ++round) {
    for (const std::string& p : paths) {
      f.begin(7, "x", p, 0, t);
      f.end(7, "x", p, 0, t, t + 10);
      t += 100;
    }
  }
  // The same id under one parent through two unselected regions, in turns.
  for (int round = 0; round < 3; ++round) {
    for (const char* p : {"a/u/c", "a/v/c"}) {
      f.begin(1, "a", "a", 0, t);
      f.begin(3, "c", p, 1, t + 1);
      f.end(3, "c", p, 1, t + 1, t + 5);
      f.end(1, "a", "a", 0, t, t + 10);
      t += 100;
    }
  }
  const int kDeep = 150;
  for (int d = 0; d < kDeep; ++d) f.begin(100, "d", "deep" + std::to_string(d), d, t + d);
  for (int d = kDeep - 1; d >= 0; --d) {
    f.end(100, "d", "deep" + std::to_string(d), d, t + d, t + 2 * kDeep - d);
  }
  const std::vector<PathRecord> r = s.snapshot();
  EXPECT_EQ(r.size(), paths.size() + 3 + kDeep);
  for (const std::string& p : paths) {
    const PathRecord* rec = find(r, p);
    ASSERT_NE(rec, nullptr) << p;
    EXPECT_EQ(rec->totals.count, 3u) << p;
    EXPECT_EQ(rec->totals.total_ns, 30) << p;
  }
  for (const char* p : {"a/u/c", "a/v/c"}) {
    const PathRecord* rec = find(r, p);
    ASSERT_NE(rec, nullptr) << p;
    EXPECT_EQ(rec->totals.count, 3u) << p;
  }
  EXPECT_EQ(find(r, "a")->totals.self_ns, 6 * (10 - 4));
  // deepN spans [t+N, t+2*kDeep-N); its child covers all but 2 ns of it.
  EXPECT_EQ(find(r, "deep0")->totals.total_ns, 2 * kDeep);
  EXPECT_EQ(find(r, "deep0")->totals.self_ns, 2);
  EXPECT_EQ(find(r, "deep149")->totals.self_ns, 2);
}

}  // namespace regiontrace::region_stats
