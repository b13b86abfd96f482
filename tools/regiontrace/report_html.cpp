// The page of `regiontrace report --html`: a summary line, the steps stacked
// by region per rank and the stragglers on the first screen; per region,
// memory and inputs in sections that open on demand (<details>), so the page
// stays short however many regions there are. Inline SVG, no scripts.
#include <algorithm>
#include <map>
#include <set>

#include "report_html_parts.hpp"
#include "report_output.hpp"

namespace regiontrace::cli {
namespace {

using html::escape;
using html::num;

const char* const kStyle =
    "<style>body{font-family:sans-serif;margin:1em 2em}h1{font-size:1.4em;margin:.2em 0}"
    "h2{font-size:1.15em;margin:.8em 0 .3em}p{margin:.3em 0}"
    "table{border-collapse:collapse;margin:.5em 0}"
    "td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}th:first-child,td:first-child"
    "{text-align:left}td.profiled{background:#eee}.straggler{font-weight:bold}"
    ".straggler table,.straggler details{font-weight:normal}"
    ".legend{list-style:none;padding:0;margin:.3em 0;display:flex;flex-wrap:wrap;gap:.3em 1em;"
    "font-size:.9em}.swatch{display:inline-block;width:.9em;height:.9em;margin-right:.3em;"
    "vertical-align:-.1em;border:1px solid #999}details{margin:.4em 0}"
    "summary{cursor:pointer;font-weight:bold}.scroll{overflow-x:auto}.note{color:#555}</style>";

std::string plural(std::size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string rank_colour_of(const Report& report, std::int64_t rank) {
  const auto at = std::find(report.ranks.begin(), report.ranks.end(), rank);
  return html::rank_colour(static_cast<std::size_t>(at - report.ranks.begin()));
}

// Ranks that are stragglers in some region: marked on every chart.
std::set<std::int64_t> straggler_ranks(const Report& report) {
  std::set<std::int64_t> out;
  for (const auto& r : report.regions) {
    for (const auto& s : r.stragglers) out.insert(s.rank);
  }
  return out;
}

// Regions in the order they are stacked: most own time over all ranks and
// steps first (at the bottom of each bar, where they are easiest to compare).
std::vector<std::string> stack_order(const Report& report) {
  std::map<std::string, double> total;
  for (const auto& b : report.breakdown) {
    for (const auto& [rank, regions] : b.self_ms) {
      for (const auto& [region, ms] : regions) total[region] += ms;
    }
  }
  std::vector<std::pair<std::string, double>> sorted(total.begin(), total.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::vector<std::string> out;
  for (auto& [region, ms] : sorted) out.push_back(region);
  return out;
}

std::string swatch(const std::string& colour) {
  return "<span class=\"swatch\" style=\"background:" + colour + "\"></span>";
}

std::string mark_icon(bool straggler) {
  if (straggler) {
    return std::string("<svg width=\"12\" height=\"10\"><polygon points=\"2,1 10,1 6,8\" fill=\"") +
           html::kMarkInk + "\"/></svg> ";
  }
  return std::string(
             "<svg width=\"10\" height=\"10\"><circle cx=\"5\" cy=\"5\" r=\"2.5\" fill=\"") +
         html::kProfiledInk + "\"/></svg> ";
}

std::string legend(const Report& report, const std::vector<std::string>& stack) {
  std::string o = "<ul class=\"legend\">";
  for (std::size_t k = 0; k < report.ranks.size(); ++k) {
    const std::string rank = std::to_string(report.ranks[k]);
    o += "<li class=\"rank\" data-rank=\"" + rank + "\">" + swatch(html::rank_colour(k)) + "rank " +
         rank + "</li>";
  }
  for (std::size_t i = 0; i < stack.size(); ++i) {
    o += "<li class=\"region\" data-region=\"" + escape(stack[i]) + "\">" +
         swatch(html::region_colour(i)) + escape(stack[i]) + "</li>";
  }
  bool outside = false;
  for (const auto& b : report.breakdown) outside |= !b.step_ms.empty();
  if (outside) {
    o += std::string("<li class=\"region\">") + swatch(html::kOutsideFill) + html::kOutsideRegions +
         "</li>";
  }
  o += "<li class=\"mark\">" + mark_icon(true) + "straggler (outlined)</li>";
  if (!report.profiled.empty()) {
    o += "<li class=\"mark\">" + mark_icon(false) + "profiled step (torch_profiler window)</li>";
  }
  return o + "</ul>\n";
}

// "4 ranks, 6 steps (all profiled); slowest region training_step; stragglers: rank 2."
std::string summary_line(const Report& report, const std::set<std::int64_t>& stragglers) {
  std::set<std::int64_t> steps;
  std::set<std::int64_t> profiled;
  for (const auto& r : report.regions) {
    for (const auto& s : r.steps) {
      if (s.step == kWholeRun) continue;
      steps.insert(s.step);
      for (auto rank : report.ranks) {
        if (report.is_profiled(rank, s.step)) profiled.insert(s.step);
      }
    }
  }
  std::string o = "<p class=\"summary\">" + plural(report.ranks.size(), "rank", "ranks");
  if (!steps.empty()) {
    o += ", " + plural(steps.size(), "step", "steps");
    if (!profiled.empty()) {
      o += profiled.size() == steps.size() ? std::string(" (all profiled)")
                                           : " (" + std::to_string(profiled.size()) + " profiled)";
    }
  }
  for (const auto& r : report.regions) {
    if (r.region == "(step)") continue;
    o += "; slowest region <b>" + escape(r.region) + "</b> (" + num(r.total.max) +
         " ms in all, rank " + std::to_string(r.total.slowest_rank) + ")";
    break;
  }
  o += "; stragglers: ";
  if (stragglers.empty()) o += "none";
  bool first = true;
  for (auto rank : stragglers) {
    o += std::string(first ? "" : ", ") + "<b>rank " + std::to_string(rank) + "</b>";
    first = false;
  }
  return o + ".</p>\n";
}

// Each rank's median excess over the step's fastest rank.
std::string excess_paragraph(const RegionReport& r) {
  if (r.excess_over_fastest.size() < 2) return "";
  std::string o = "<p class=\"excess\" data-region=\"" + escape(r.region) +
                  "\">Over the fastest rank, median per step:";
  bool first = true;
  for (const auto& [rank, ms] : r.excess_over_fastest) {
    o += std::string(first ? " " : ", ") + "rank " + std::to_string(rank) + " +" + num(ms) + " ms";
    first = false;
  }
  return o + "</p>\n";
}

// The ops that took longer on the straggler inside the region (torch traces).
std::string slower_ops_table(const std::string& region, const Straggler& s) {
  if (!s.ops_compared) return "";
  const std::string slow = std::to_string(s.rank);
  const std::string fastest = std::to_string(s.ops_fastest_rank);
  if (s.slower_ops.empty()) {
    return "<br>no op took longer inside " + escape(region) + " on rank " + slow +
           " than on the others";
  }
  std::string o = "<details class=\"slower-ops\"><summary>" +
                  plural(s.slower_ops.size(), "op", "ops") + " took longer on rank " + slow +
                  "</summary><table class=\"slower-ops\"><tr><th>op (took longer inside " +
                  escape(region) + ")</th><th>added ms</th><th>rank " + slow + " ms</th><th>rank " +
                  fastest +
                  " (fastest other) ms</th><th>median of the "
                  "others ms</th></tr>";
  for (const OpDelta& d : s.slower_ops) {
    o += "<tr><td>" + escape(d.op) + "</td><td>+" + num(d.added_ms) + "</td><td>" + num(d.rank_ms) +
         "</td><td>" + num(d.fastest_ms) + "</td><td>" + num(d.others_median_ms) + "</td></tr>";
  }
  return o + "</table></details>";
}

std::string findings(const Report& report) {
  std::string o = "<h2>Stragglers</h2>\n<ul id=\"stragglers\">";
  bool any = false;
  for (const auto& r : report.regions) {
    for (const auto& s : r.stragglers) {
      any = true;
      o += "<li class=\"straggler\" data-region=\"" + escape(r.region) + "\" data-rank=\"" +
           std::to_string(s.rank) + "\">" + mark_icon(true) + escape(r.region) + ": rank " +
           std::to_string(s.rank) + " slow in " + std::to_string(s.slow_steps) + " of " +
           std::to_string(s.steps) + " steps (median excess " + num(s.median_excess) +
           " ms over the median, " + num(s.fastest_excess) + " ms over the fastest rank" +
           (s.fastest_rank ? " (rank " + std::to_string(*s.fastest_rank) + ")" : "") + ")" +
           slower_ops_table(r.region, s) + "</li>";
    }
  }
  if (!any) o += "<li>none</li>";
  return o + "</ul>\n";
}

// A header cell per rank: its colour, and the straggler mark.
std::string rank_headers(const Report& report, const std::set<std::int64_t>& stragglers,
                         const char* unit) {
  std::string o;
  for (auto rank : report.ranks) {
    o += "<th class=\"rank\" data-rank=\"" + std::to_string(rank) + "\">" +
         swatch(rank_colour_of(report, rank)) + (stragglers.count(rank) ? mark_icon(true) : "") +
         "rank " + std::to_string(rank) + " " + unit + "</th>";
  }
  return o;
}

std::string region_table(const Report& report, const RegionReport& r,
                         const std::set<std::int64_t>& stragglers) {
  std::string o = "<div class=\"scroll\"><table class=\"steps\" data-region=\"" + escape(r.region) +
                  "\"><tr><th>step</th>" + rank_headers(report, stragglers, "ms") +
                  "<th>min ms</th><th>median ms</th><th>max ms</th>"
                  "<th>slowest</th><th>imbalance</th><th>wait ms</th></tr>";
  auto row = [&](const std::string& label, const RankSpread& s, bool step) {
    bool profiled = false;
    std::string cells;
    for (auto rank : report.ranks) {
      const bool p = step && report.is_profiled(rank, s.step);
      profiled |= p;
      auto it = s.values.find(rank);
      cells += std::string(p ? "<td class=\"profiled\">" : "<td>") +
               (it == s.values.end() ? "-" : num(it->second)) + "</td>";
    }
    o += "<tr><td>" + label + (profiled ? " " + mark_icon(false) : "") + "</td>" + cells + "<td>" +
         num(s.min) + "</td><td>" + num(s.median) + "</td><td>" + num(s.max) + "</td><td>rank " +
         std::to_string(s.slowest_rank) + "</td><td>" + num(s.imbalance) + "</td><td>" +
         num(s.wait) + "</td></tr>";
  };
  for (const auto& s : r.steps) row(step_label(s.step), s, s.step != kWholeRun);
  if (r.steps.size() > 1) row("all", r.total, false);
  o += "</table></div>\n";
  if (!report.profiled.empty()) {
    o += "<p class=\"note\">Shaded: a step the rank's torch profiler collected, its time "
         "including the profiler's overhead.</p>\n";
  }
  return o;
}

// Marks only the region's own stragglers: a rank slow in one region need not
// be in the others.
std::string region_section(const Report& report, const RegionReport& r) {
  std::set<std::int64_t> stragglers;
  for (const auto& s : r.stragglers) stragglers.insert(s.rank);
  std::string o = "<details class=\"region\" data-region=\"" + escape(r.region) +
                  "\"><summary>Region " + escape(r.region) + ": " + num(r.total.max) +
                  " ms in all on rank " + std::to_string(r.total.slowest_rank) + ", imbalance " +
                  num(r.total.imbalance, 2);
  for (const auto& s : r.stragglers) o += ", straggler rank " + std::to_string(s.rank);
  o += "</summary>\n";
  o += html::line_plot(r, report.ranks) + "\n" + html::rank_plot(r, report.ranks, stragglers) +
       "\n" + excess_paragraph(r) + region_table(report, r, stragglers);
  return o + "</details>\n";
}

std::string memory_section(const Report& report) {
  std::set<std::string> counters;
  for (const auto& t : report.counters) counters.insert(t.name);
  if (report.memory.empty() && counters.empty()) return "";
  std::string o = "<details class=\"memory\"><summary>Memory";
  if (!report.memory.empty()) {
    const MemoryReport& top = report.memory.front();
    o += ": highest peak " + num(top.peaks.max / 1048576.0, 1) + " MiB (" + escape(top.region) +
         ", " + escape(top.device) + ", rank " + std::to_string(top.peaks.slowest_rank) + ")";
  } else {
    o += " over time";
  }
  o += "</summary>\n";
  for (const auto& name : counters) {
    o += "<p>" + escape(name) + ", the highest of each time slice:</p>\n" +
         html::counter_plot(report, name) + "\n";
  }
  if (!report.memory.empty()) {
    o += "<div class=\"scroll\"><table class=\"memory-peaks\"><tr><th>region</th><th>device</th>" +
         rank_headers(report, {}, "MiB") +
         "<th>min MiB</th><th>median MiB</th><th>max MiB</th><th>highest</th><th>imbalance</th>"
         "</tr>";
    for (const auto& m : report.memory) {
      o += "<tr><td>" + escape(m.region) + "</td><td>" + escape(m.device) + "</td>";
      for (auto rank : report.ranks) {
        auto it = m.peaks.values.find(rank);
        o += "<td>" + (it == m.peaks.values.end() ? "-" : num(it->second / 1048576.0, 1)) + "</td>";
      }
      o += "<td>" + num(m.peaks.min / 1048576.0, 1) + "</td><td>" +
           num(m.peaks.median / 1048576.0, 1) + "</td><td>" + num(m.peaks.max / 1048576.0, 1) +
           "</td><td>rank " + std::to_string(m.peaks.slowest_rank) + "</td><td>" +
           num(m.peaks.imbalance) + "</td></tr>";
    }
    o += "</table></div>\n";
  }
  return o + "</details>\n";
}

std::string inputs_section(const Report& report) {
  if (report.sources.empty()) return "";
  std::string o = "<details class=\"inputs\"><summary>Inputs: " +
                  plural(report.sources.size(), "trace", "traces") +
                  "</summary>\n<table><tr><th>rank</th><th>sink</th><th>file</th>"
                  "<th>region spans</th><th>counted</th><th>collection window</th></tr>";
  for (const auto& s : report.sources) {
    o += "<tr><td>" + std::to_string(s.rank) + "</td><td>" + escape(s.sink) + "</td><td>" +
         escape(s.source) + "</td><td>" + std::to_string(s.region_spans) + "</td><td>" +
         (s.used ? "yes" : "no") + "</td><td>";
    auto found = report.profiled.find(s.rank);
    if (found != report.profiled.end() && s.sink == "torch_profiler") {
      bool first = true;
      for (const auto& [a, b] : found->second) {
        o +=
            std::string(first ? "" : ", ") + "steps " + std::to_string(a) + "-" + std::to_string(b);
        first = false;
      }
    }
    o += "</td></tr>";
  }
  return o + "</table></details>\n";
}

}  // namespace

std::string report_html(const Report& report) {
  const std::set<std::int64_t> stragglers = straggler_ranks(report);
  const std::vector<std::string> stack = stack_order(report);
  std::string o =
      "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
      "<title>regiontrace report</title>" +
      std::string(kStyle) + "</head><body>\n";
  o += "<h1>regiontrace report</h1>\n" + summary_line(report, stragglers);
  for (const auto& over : report.oversubscribed) {
    o += "<p class=\"oversubscribed\">" + std::to_string(over.ranks.size()) + " ranks ran on " +
         escape(over.host) + " with " + std::to_string(over.cpus) +
         " CPUs between them: they took turns, so their times, and who looks like a "
         "straggler, show the scheduler as much as the work.</p>\n";
  }
  const std::string overview = html::overview_svg(report, stack, stragglers);
  if (!overview.empty()) {
    o += "<section id=\"overview\"><h2>Each step's time by region, per rank</h2>\n" +
         legend(report, stack) + overview + "\n</section>\n";
  }
  o += findings(report);
  if (!report.regions.empty()) o += "<h2>Regions</h2>\n";
  for (const auto& r : report.regions) o += region_section(report, r);
  o += memory_section(report);
  o += inputs_section(report);
  o += "</body></html>\n";
  return o;
}

}  // namespace regiontrace::cli
