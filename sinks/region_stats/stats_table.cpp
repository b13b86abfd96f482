#include "stats_table.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "regiontrace/sdk/text_format.hpp"
#include "regiontrace/sdk/text_table.hpp"

namespace regiontrace::region_stats {
namespace {

namespace text = sdk::text;

struct Row {
  std::string label;
  const PathSummary* summary;
};

// A name ending in a number (`blocks.3`, `layer12`): its stem and number.
bool split_number(const std::string& name, std::string& stem, unsigned long long& number) {
  std::size_t digits = name.size();
  while (digits > 0 && name[digits - 1] >= '0' && name[digits - 1] <= '9') --digits;
  if (digits == name.size() || name.size() - digits > 18) return false;
  stem = name.substr(0, digits);
  number = std::stoull(name.substr(digits));
  return true;
}

// Siblings by total time, except that numbered siblings of one stem
// (blocks.0 ... blocks.27) stay together in their numeric order, where the
// largest of them would stand: sorted by total they read as shuffled
// (0, 2, 4, 1, 5, 3), and the eye looks for block 3 by its number.
void group_numbered(std::vector<const PathSummary*>& siblings) {
  std::map<std::string, std::vector<std::pair<unsigned long long, const PathSummary*>>> groups;
  for (const PathSummary* p : siblings) {
    std::string stem;
    unsigned long long number = 0;
    if (split_number(p->name, stem, number)) groups[stem].emplace_back(number, p);
  }
  std::vector<const PathSummary*> ordered;
  std::set<std::string> placed;
  for (const PathSummary* p : siblings) {  // by total: the first member places its group
    std::string stem;
    unsigned long long number = 0;
    if (!split_number(p->name, stem, number) || groups[stem].size() < 2) {
      ordered.push_back(p);
      continue;
    }
    if (!placed.insert(stem).second) continue;
    auto& members = groups[stem];
    std::stable_sort(members.begin(), members.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& member : members) ordered.push_back(member.second);
  }
  siblings = std::move(ordered);
}

std::string parent_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash);
}

// Parents before their children, siblings by total time; a path whose
// parent is not reported (not selected) starts a tree of its own, shown in
// full so its place is still clear.
void indented_rows(const std::vector<PathSummary>& regions, std::vector<Row>& rows) {
  std::set<std::string> present;
  for (const PathSummary& p : regions) present.insert(p.path);
  std::map<std::string, std::vector<const PathSummary*>> children;  // already sorted by total
  std::vector<const PathSummary*> roots;
  for (const PathSummary& p : regions) {
    const std::string parent = parent_of(p.path);
    if (!parent.empty() && present.count(parent) != 0) {
      children[parent].push_back(&p);
    } else {
      roots.push_back(&p);
    }
  }
  struct Walk {
    std::map<std::string, std::vector<const PathSummary*>>& children;
    std::vector<Row>& rows;
    void operator()(const PathSummary* p, std::size_t indent, bool full) {
      rows.push_back({std::string(indent, ' ') + (full ? p->path : p->name), p});
      auto it = children.find(p->path);
      if (it == children.end()) return;
      for (const PathSummary* c : it->second) (*this)(c, indent + 2, false);
    }
  } walk{children, rows};
  group_numbered(roots);
  for (auto& entry : children) group_numbered(entry.second);
  for (const PathSummary* r : roots) walk(r, 0, true);
}

// A region's total as a share of the sink's wall time. Threads add up: with
// several threads a region can hold more than 100 %.
std::string percent_of(std::int64_t ns, std::int64_t wall_ns) {
  if (wall_ns <= 0) return "-";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f", 100.0 * static_cast<double>(ns) / wall_ns);
  return buf;
}

}  // namespace

std::string stats_table(const StatsReport& report, TablePaths paths) {
  std::vector<Row> rows;
  if (paths == TablePaths::kIndented) {
    indented_rows(report.regions, rows);
  } else {
    for (const PathSummary& p : report.regions) rows.push_back({p.path, &p});
  }
  char pct[64];
  std::snprintf(pct, sizeof(pct), "%.2f", LogBuckets::kRelativeError * 100);
  std::string out =
      "region_stats: rank " + std::to_string(report.rank) + ", pid " + std::to_string(report.pid) +
      ", " + std::to_string(report.threads.size() + report.threads_folded) + " thread(s)" +
      (report.threads_folded == 0 ? std::string()
                                  : " (" + std::to_string(report.threads_folded) +
                                        " finished ones folded into the totals)") +
      ", wall " + text::duration(report.wall_ns) + " (percentiles within " + pct + " %)\n";
  if (rows.empty()) {
    out += "  no region ended while the sink ran\n";
    return out;
  }
  using Align = text::Table::Align;
  text::Table table;
  table.add_column({"region", Align::kLeft, 6})
      .add_column({"count", Align::kRight, 9})
      .add_column({"total", Align::kRight, 9})
      .add_column({"% wall", Align::kRight, 6});
  for (const char* h : {"self", "mean", "min", "max", "p50", "p90", "p99"}) {
    table.add_column({h, Align::kRight, 9});
  }
  for (const Row& r : rows) {
    const PathSummary& s = *r.summary;
    std::vector<std::string> cells = {r.label, std::to_string(s.totals.count),
                                      text::duration(s.totals.total_ns),
                                      percent_of(s.totals.total_ns, report.wall_ns)};
    for (std::int64_t v :
         {s.totals.self_ns, s.totals.mean_ns(), s.totals.min_or_zero(), s.totals.max_ns,
          s.percentile(0.5), s.percentile(0.9), s.percentile(0.99)}) {
      cells.push_back(text::duration(v));
    }
    table.add_row(std::move(cells));
  }
  out += table.text();
  return out;
}

}  // namespace regiontrace::region_stats
