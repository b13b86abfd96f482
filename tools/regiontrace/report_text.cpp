#include <algorithm>
#include <cstdio>

#include "regiontrace/sdk/text_format.hpp"
#include "report_output.hpp"
#include "text_table.hpp"

namespace regiontrace::cli {
namespace {

using sdk::text::fixed;

std::string mib(double bytes) {
  return fixed(bytes / (1024.0 * 1024.0), 1);
}

// Per-rank columns only while the table stays readable; --json has them all.
constexpr std::size_t kMaxRankColumns = 8;

void spread_table(std::ostream& out, const RegionReport& r,
                  const std::vector<std::int64_t>& ranks) {
  const bool per_rank = ranks.size() <= kMaxRankColumns;
  std::vector<std::string> headers = {"step"};
  if (per_rank) {
    for (auto rank : ranks) headers.push_back("rank" + std::to_string(rank));
  }
  for (const char* h : {"min_ms", "median_ms", "max_ms", "slowest", "imbalance", "wait_ms"}) {
    headers.push_back(h);
  }
  std::vector<TextTable::Align> align(headers.size(), TextTable::Align::kRight);
  align[0] = TextTable::Align::kLeft;
  TextTable table(headers, align);
  auto add = [&](const std::string& label, const RankSpread& s) {
    std::vector<std::string> row = {label};
    if (per_rank) {
      for (auto rank : ranks) {
        auto it = s.values.find(rank);
        row.push_back(it == s.values.end() ? "-" : fixed(it->second, 3));
      }
    }
    row.push_back(fixed(s.min, 3));
    row.push_back(fixed(s.median, 3));
    row.push_back(fixed(s.max, 3));
    row.push_back("rank " + std::to_string(s.slowest_rank));
    row.push_back(fixed(s.imbalance, 3));
    row.push_back(fixed(s.wait, 3));
    table.add_row(std::move(row));
  };
  for (const auto& s : r.steps) add(s.step == kWholeRun ? "run" : std::to_string(s.step), s);
  if (r.steps.size() > 1) add("all", r.total);
  table.print(out);
}

// "rank 0 +0.000, rank 1 +20.012": the largest ones when there are many ranks.
void excess_line(std::ostream& out, const RegionReport& r) {
  if (r.excess_over_fastest.size() < 2) return;
  std::vector<std::pair<std::int64_t, double>> ranks(r.excess_over_fastest.begin(),
                                                     r.excess_over_fastest.end());
  const bool all = ranks.size() <= kMaxRankColumns;
  if (!all) {
    std::stable_sort(ranks.begin(), ranks.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    ranks.resize(3);
  }
  out << "  over the fastest rank (median per step, ms): ";
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    out << (i > 0 ? ", " : "") << "rank " << ranks[i].first << " +" << fixed(ranks[i].second, 3);
  }
  if (!all) out << " (the 3 largest of " << r.excess_over_fastest.size() << " ranks)";
  out << "\n";
}

void slower_ops_table(std::ostream& out, const std::string& region, const Straggler& s) {
  if (!s.ops_compared) return;
  out << "    ops that took longer on rank " << s.rank << " inside " << terminal_text(region)
      << " (total ms; rank " << s.ops_fastest_rank << " was the fastest other rank)";
  if (s.slower_ops.empty()) {
    out << ": none (the time is not in ops: waiting, sleeping, or work outside torch)\n";
    return;
  }
  out << ":\n";
  using A = TextTable::Align;
  TextTable table({"op", "added_ms", "rank" + std::to_string(s.rank),
                   "rank" + std::to_string(s.ops_fastest_rank), "others_median"},
                  {A::kLeft, A::kRight, A::kRight, A::kRight, A::kRight});
  for (const auto& op : s.slower_ops) {
    table.add_row({op.op, "+" + fixed(op.added_ms, 3), fixed(op.rank_ms, 3),
                   fixed(op.fastest_ms, 3), fixed(op.others_median_ms, 3)});
  }
  table.print(out, "      ");
}

}  // namespace

std::string step_label(std::int64_t step) {
  return step == kWholeRun ? "run" : "step " + std::to_string(step);
}

namespace {

// Ranks 0, 1, 2, 3 as "0-3"; gaps as "0-3, 8".
std::string rank_ranges(const std::vector<std::int64_t>& ranks) {
  std::string out;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!out.empty()) out += ", ";
    out += std::to_string(ranks[i]);
    if (j > i) out += "-" + std::to_string(ranks[j]);
    i = j + 1;
  }
  return out;
}

void stragglers_section(std::ostream& out, const Report& report) {
  const auto& c = report.criteria;
  out << "\nStragglers (slower than the median by more than " << fixed(100 * c.threshold, 0)
      << "% and " << fixed(c.min_excess_ms, 3) << " ms in more than " << fixed(100 * c.share, 0)
      << "% of steps):\n";
  bool any = false;
  for (const auto& r : report.regions) {
    for (const auto& s : r.stragglers) {
      any = true;
      out << "  " << terminal_text(r.region) << ": rank " << s.rank << " in " << s.slow_steps
          << " of " << s.steps << " steps, median excess " << fixed(s.median_excess, 3)
          << " ms over the median, " << fixed(s.fastest_excess, 3) << " ms over the fastest rank";
      if (s.fastest_rank) out << " (rank " << *s.fastest_rank << ")";
      out << "\n";
      slower_ops_table(out, r.region, s);
    }
  }
  if (!any) out << "  none\n";
}

void memory_section(std::ostream& out, const Report& report) {
  out << "\nMemory peaks (MiB per rank):\n";
  std::vector<std::string> headers = {"region", "device"};
  const bool per_rank = report.ranks.size() <= kMaxRankColumns;
  if (per_rank) {
    for (auto rank : report.ranks) headers.push_back("rank" + std::to_string(rank));
  }
  for (const char* h : {"min", "median", "max", "highest", "imbalance"}) headers.push_back(h);
  std::vector<TextTable::Align> align(headers.size(), TextTable::Align::kRight);
  align[0] = align[1] = TextTable::Align::kLeft;
  TextTable table(headers, align);
  for (const auto& m : report.memory) {
    std::vector<std::string> row = {m.region, m.device};
    if (per_rank) {
      for (auto rank : report.ranks) {
        auto it = m.peaks.values.find(rank);
        row.push_back(it == m.peaks.values.end() ? "-" : mib(it->second));
      }
    }
    row.push_back(mib(m.peaks.min));
    row.push_back(mib(m.peaks.median));
    row.push_back(mib(m.peaks.max));
    row.push_back("rank " + std::to_string(m.peaks.slowest_rank));
    row.push_back(fixed(m.peaks.imbalance, 3));
    table.add_row(std::move(row));
  }
  table.print(out);
  out << "\nMemory outliers (peak above the median by more than "
      << fixed(100 * report.criteria.threshold, 0) << "%):\n";
  bool any = false;
  for (const auto& m : report.memory) {
    for (const auto& s : m.outliers) {
      any = true;
      out << "  " << terminal_text(m.region) << " on " << m.device << ": rank " << s.rank << ", "
          << mib(s.median_excess) << " MiB above the median\n";
    }
  }
  if (!any) out << "  none\n";
}

}  // namespace

// What was found comes first (with 64 ranks the inputs alone fill a
// screen): ranks, oversubscribed hosts, stragglers, the tables; the inputs
// last.
void print_report_text(std::ostream& out, const Report& report) {
  out << "Ranks: " << report.ranks.size() << " (" << report.sources.size()
      << " traces, listed at the end)\n";
  for (const auto& o : report.oversubscribed) {
    out << "warning: ranks " << rank_ranges(o.ranks) << " ran on " << terminal_text(o.host)
        << " with " << o.cpus << (o.cpus == 1 ? " CPU" : " CPUs")
        << " between them: " << o.ranks.size()
        << " ranks took turns on them,\n  so their times, and who looks "
        << "like a straggler, show the scheduler as much as the work\n";
  }
  stragglers_section(out, report);
  for (const auto& r : report.regions) {
    out << "\nRegion " << terminal_text(r.region) << " (ms per rank";
    if (r.steps.size() > 1) out << ", " << r.steps.size() << " steps";
    out << "):\n";
    spread_table(out, r, report.ranks);
    excess_line(out, r);
  }
  if (!report.memory.empty()) memory_section(out, report);
  out << "\nInputs:\n";
  for (const auto& s : report.sources) {
    out << "  rank " << s.rank << " (from " << s.rank_from << "): " << s.source;
    if (!s.sink.empty()) out << " [" << s.sink << "]";
    out << ", " << s.region_spans << " region spans";
    if (!s.used) out << " (not counted: another trace of this rank has more region spans)";
    out << "\n";
  }
}

}  // namespace regiontrace::cli
