#include "stats_table.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

namespace regiontrace::region_stats {
namespace {

struct Row {
  std::string label;
  const PathSummary* summary;
};

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
  for (const PathSummary* r : roots) walk(r, 0, true);
}

std::string padded(std::string s, std::size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

std::string right(const std::string& s, std::size_t width) {
  return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}

}  // namespace

std::string format_duration(std::int64_t ns) {
  char buf[32];
  if (ns < 1000) {
    std::snprintf(buf, sizeof(buf), "%lld ns", static_cast<long long>(ns));
  } else if (ns < 1000000) {
    std::snprintf(buf, sizeof(buf), "%.2f us", static_cast<double>(ns) / 1e3);
  } else if (ns < 1000000000) {
    std::snprintf(buf, sizeof(buf), "%.2f ms", static_cast<double>(ns) / 1e6);
  } else {
    std::snprintf(buf, sizeof(buf), "%.3f s", static_cast<double>(ns) / 1e9);
  }
  return buf;
}

std::string stats_table(const StatsReport& report, TablePaths paths) {
  std::vector<Row> rows;
  if (paths == TablePaths::kIndented) {
    indented_rows(report.regions, rows);
  } else {
    for (const PathSummary& p : report.regions) rows.push_back({p.path, &p});
  }
  std::size_t width = 6;
  for (const Row& r : rows) width = std::max(width, r.label.size());
  width += 2;
  char pct[64];
  std::snprintf(pct, sizeof(pct), "%.2f", LogBuckets::kRelativeError * 100);
  std::string out =
      "region_stats: rank " + std::to_string(report.rank) + ", pid " + std::to_string(report.pid) +
      ", " + std::to_string(report.threads.size() + report.threads_folded) + " thread(s)" +
      (report.threads_folded == 0 ? std::string()
                                  : " (" + std::to_string(report.threads_folded) +
                                        " finished ones folded into the totals)") +
      ", wall " + format_duration(report.wall_ns) + " (percentiles within " + pct + " %)\n";
  if (rows.empty()) {
    out += "  no region ended while the sink ran\n";
    return out;
  }
  out += "  " + padded("region", width) + right("count", 9);
  for (const char* h : {"total", "self", "mean", "min", "max", "p50", "p90", "p99"}) {
    out += right(h, 11);
  }
  out += '\n';
  for (const Row& r : rows) {
    const PathSummary& s = *r.summary;
    out += "  " + padded(r.label, width) + right(std::to_string(s.totals.count), 9);
    for (std::int64_t v :
         {s.totals.total_ns, s.totals.self_ns, s.totals.mean_ns(), s.totals.min_or_zero(),
          s.totals.max_ns, s.percentile(0.5), s.percentile(0.9), s.percentile(0.99)}) {
      out += right(format_duration(v), 11);
    }
    out += '\n';
  }
  return out;
}

}  // namespace regiontrace::region_stats
