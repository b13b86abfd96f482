#include <algorithm>
#include <cstdio>

#include "report_output.hpp"

namespace regiontrace::cli {
namespace {

std::string escape_html(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string num(double v, int decimals = 3) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", decimals, v);
  return buf;
}

// A colour per rank that stays distinct for the first dozen ranks.
std::string colour(std::size_t index) {
  static const char* const kPalette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
                                         "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
                                         "#bcbd22", "#17becf", "#393b79", "#637939"};
  return kPalette[index % (sizeof(kPalette) / sizeof(kPalette[0]))];
}

// Steps on the x axis, milliseconds on the y axis, one series per rank.
std::string plot(const RegionReport& r, const std::vector<std::int64_t>& ranks) {
  constexpr double kW = 640, kH = 280, kLeft = 60, kRight = 110, kTop = 20, kBottom = 40;
  const double pw = kW - kLeft - kRight;
  const double ph = kH - kTop - kBottom;
  double ymax = 0;
  for (const auto& s : r.steps) ymax = std::max(ymax, s.max);
  if (ymax <= 0) ymax = 1;
  const std::size_t n = r.steps.size();
  auto x_of = [&](std::size_t i) {
    return kLeft + (n <= 1 ? pw / 2 : pw * static_cast<double>(i) / static_cast<double>(n - 1));
  };
  auto y_of = [&](double v) { return kTop + ph * (1 - v / ymax); };
  std::string o = "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"plot\" width=\"" + num(kW, 0) +
                  "\" height=\"" + num(kH, 0) + "\" data-region=\"" + escape_html(r.region) + "\">";
  o += "<line x1=\"" + num(kLeft, 0) + "\" y1=\"" + num(kTop + ph, 0) + "\" x2=\"" +
       num(kLeft + pw, 0) + "\" y2=\"" + num(kTop + ph, 0) + "\" stroke=\"#444\"/>";
  o += "<line x1=\"" + num(kLeft, 0) + "\" y1=\"" + num(kTop, 0) + "\" x2=\"" + num(kLeft, 0) +
       "\" y2=\"" + num(kTop + ph, 0) + "\" stroke=\"#444\"/>";
  for (int tick = 0; tick <= 4; ++tick) {
    const double v = ymax * tick / 4;
    o += "<text x=\"" + num(kLeft - 6, 0) + "\" y=\"" + num(y_of(v) + 4, 1) +
         "\" text-anchor=\"end\" font-size=\"11\">" + num(v, v < 10 ? 2 : 1) + "</text>";
  }
  for (std::size_t i = 0; i < n; ++i) {
    o += "<text x=\"" + num(x_of(i), 1) + "\" y=\"" + num(kTop + ph + 16, 0) +
         "\" text-anchor=\"middle\" font-size=\"11\">" +
         (r.steps[i].step == kWholeRun ? "run" : std::to_string(r.steps[i].step)) + "</text>";
  }
  o += "<text x=\"" + num(kLeft + pw / 2, 0) + "\" y=\"" + num(kH - 4, 0) +
       "\" text-anchor=\"middle\" font-size=\"12\">step</text>";
  o += "<text x=\"14\" y=\"" + num(kTop + ph / 2, 0) +
       "\" font-size=\"12\" transform=\"rotate(-90 14 " + num(kTop + ph / 2, 0) +
       ")\" text-anchor=\"middle\">ms</text>";
  for (std::size_t k = 0; k < ranks.size(); ++k) {
    const std::int64_t rank = ranks[k];
    const std::string c = colour(k);
    std::string points;
    std::string dots;
    for (std::size_t i = 0; i < n; ++i) {
      auto it = r.steps[i].values.find(rank);
      if (it == r.steps[i].values.end()) continue;
      const std::string x = num(x_of(i), 1);
      const std::string y = num(y_of(it->second), 1);
      points += (points.empty() ? "" : " ") + x + "," + y;
      dots += "<circle cx=\"" + x + "\" cy=\"" + y + "\" r=\"3\" fill=\"" + c + "\"><title>rank " +
              std::to_string(rank) + ", " + step_label(r.steps[i].step) + ": " + num(it->second) +
              " ms</title></circle>";
    }
    if (points.empty()) continue;
    o += "<g class=\"series\" data-rank=\"" + std::to_string(rank) + "\">";
    o += "<polyline fill=\"none\" stroke=\"" + c + "\" stroke-width=\"1.5\" points=\"" + points +
         "\"/>" + dots;
    const double ly = kTop + 14.0 * static_cast<double>(k);
    o += "<rect x=\"" + num(kW - kRight + 10, 0) + "\" y=\"" + num(ly, 0) +
         "\" width=\"10\" height=\"10\" fill=\"" + c + "\"/><text x=\"" + num(kW - kRight + 24, 0) +
         "\" y=\"" + num(ly + 9, 0) + "\" font-size=\"11\">rank " + std::to_string(rank) +
         "</text></g>";
  }
  o += "</svg>";
  return o;
}

// Ranks across, milliseconds up: each step a dot in its rank's column, the
// rank's median over steps a bar; stragglers in red. Shows at a glance which
// rank sits above the others.
std::string rank_plot(const RegionReport& r, const std::vector<std::int64_t>& ranks) {
  constexpr double kH = 280, kLeft = 60, kTop = 20, kBottom = 40, kColumn = 48;
  const double width = kLeft + kColumn * static_cast<double>(ranks.size()) + 20;
  const double ph = kH - kTop - kBottom;
  double ymax = 0;
  for (const auto& s : r.steps) ymax = std::max(ymax, s.max);
  if (ymax <= 0) ymax = 1;
  auto y_of = [&](double v) { return kTop + ph * (1 - v / ymax); };
  std::string o = "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"rank-plot\" width=\"" +
                  num(width, 0) + "\" height=\"" + num(kH, 0) + "\" data-region=\"" +
                  escape_html(r.region) + "\">";
  o += "<line x1=\"" + num(kLeft, 0) + "\" y1=\"" + num(kTop + ph, 0) + "\" x2=\"" +
       num(width - 10, 0) + "\" y2=\"" + num(kTop + ph, 0) + "\" stroke=\"#444\"/>";
  for (int tick = 0; tick <= 4; ++tick) {
    const double v = ymax * tick / 4;
    o += "<text x=\"" + num(kLeft - 6, 0) + "\" y=\"" + num(y_of(v) + 4, 1) +
         "\" text-anchor=\"end\" font-size=\"11\">" + num(v, v < 10 ? 2 : 1) + "</text>";
  }
  o += "<text x=\"14\" y=\"" + num(kTop + ph / 2, 0) +
       "\" font-size=\"12\" transform=\"rotate(-90 14 " + num(kTop + ph / 2, 0) +
       ")\" text-anchor=\"middle\">ms</text>";
  for (std::size_t k = 0; k < ranks.size(); ++k) {
    const std::int64_t rank = ranks[k];
    const double x = kLeft + kColumn * (static_cast<double>(k) + 0.5);
    bool straggler = false;
    for (const auto& s : r.stragglers) straggler |= s.rank == rank;
    const std::string c = straggler ? "#d62728" : "#1f77b4";
    std::vector<double> values;
    o += "<g class=\"rank-column\" data-rank=\"" + std::to_string(rank) + "\">";
    for (const auto& s : r.steps) {
      auto it = s.values.find(rank);
      if (it == s.values.end()) continue;
      values.push_back(it->second);
      o += "<circle cx=\"" + num(x, 1) + "\" cy=\"" + num(y_of(it->second), 1) +
           "\" r=\"2.5\" fill=\"" + c + "\" fill-opacity=\"0.6\"><title>rank " +
           std::to_string(rank) + ", " + step_label(s.step) + ": " + num(it->second) +
           " ms</title></circle>";
    }
    if (!values.empty()) {
      std::sort(values.begin(), values.end());
      const std::size_t n = values.size();
      const double median = n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
      o += "<line x1=\"" + num(x - 14, 1) + "\" x2=\"" + num(x + 14, 1) + "\" y1=\"" +
           num(y_of(median), 1) + "\" y2=\"" + num(y_of(median), 1) + "\" stroke=\"" + c +
           "\" stroke-width=\"2\"><title>rank " + std::to_string(rank) + " median " + num(median) +
           " ms</title></line>";
    }
    o += "<text x=\"" + num(x, 1) + "\" y=\"" + num(kTop + ph + 16, 0) +
         "\" text-anchor=\"middle\" font-size=\"11\">" + std::to_string(rank) + "</text></g>";
  }
  o += "<text x=\"" + num((kLeft + width) / 2, 0) + "\" y=\"" + num(kH - 4, 0) +
       "\" text-anchor=\"middle\" font-size=\"12\">rank</text></svg>";
  return o;
}

// Each rank's median excess over the step's fastest rank.
std::string excess_paragraph(const RegionReport& r) {
  if (r.excess_over_fastest.size() < 2) return "";
  std::string o = "<p class=\"excess\" data-region=\"" + escape_html(r.region) +
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
    return "<br>no op took longer inside " + escape_html(region) + " on rank " + slow +
           " than on the others";
  }
  std::string o = "<table class=\"slower-ops\"><tr><th>op (took longer inside " +
                  escape_html(region) + ")</th><th>added ms</th><th>rank " + slow +
                  " ms</th><th>rank " + fastest +
                  " (fastest other) ms</th><th>median of the "
                  "others ms</th></tr>";
  for (const OpDelta& d : s.slower_ops) {
    o += "<tr><td>" + escape_html(d.op) + "</td><td>+" + num(d.added_ms) + "</td><td>" +
         num(d.rank_ms) + "</td><td>" + num(d.fastest_ms) + "</td><td>" + num(d.others_median_ms) +
         "</td></tr>";
  }
  return o + "</table>";
}

}  // namespace

std::string report_html(const Report& report) {
  std::string o =
      "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>regiontrace report</title>"
      "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;margin:.5em 0}"
      "td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}th:first-child,td:first-child"
      "{text-align:left}.straggler{color:#b00;font-weight:bold}"
      ".straggler table{color:#000;font-weight:normal}</style></head><body>\n";
  o += "<h1>regiontrace report</h1>\n<p>" + std::to_string(report.ranks.size()) +
       (report.ranks.size() == 1 ? " rank" : " ranks") + ".</p>\n";
  for (const auto& over : report.oversubscribed) {
    o += "<p class=\"oversubscribed\">" + std::to_string(over.ranks.size()) + " ranks ran on " +
         escape_html(over.host) + " with " + std::to_string(over.cpus) +
         " CPUs between them: they took turns, so their times, and who looks like a "
         "straggler, show the scheduler as much as the work.</p>\n";
  }
  o += "<h2>Stragglers</h2>\n<ul id=\"stragglers\">";
  bool any = false;
  for (const auto& r : report.regions) {
    for (const auto& s : r.stragglers) {
      any = true;
      o += "<li class=\"straggler\" data-region=\"" + escape_html(r.region) + "\" data-rank=\"" +
           std::to_string(s.rank) + "\">" + escape_html(r.region) + ": rank " +
           std::to_string(s.rank) + " slow in " + std::to_string(s.slow_steps) + " of " +
           std::to_string(s.steps) + " steps (median excess " + num(s.median_excess) +
           " ms over the median, " + num(s.fastest_excess) + " ms over the fastest rank" +
           (s.fastest_rank ? " (rank " + std::to_string(*s.fastest_rank) + ")" : "") + ")" +
           slower_ops_table(r.region, s) + "</li>";
    }
  }
  if (!any) o += "<li>none</li>";
  o += "</ul>\n";
  for (const auto& r : report.regions) {
    o += "<h2>Region " + escape_html(r.region) + "</h2>\n" + plot(r, report.ranks) + "\n" +
         rank_plot(r, report.ranks) + "\n";
    o += excess_paragraph(r);
    o += "<table><tr><th>step</th><th>min ms</th><th>median ms</th><th>max ms</th>"
         "<th>slowest</th><th>imbalance</th><th>wait ms</th></tr>";
    auto row = [&](const std::string& label, const RankSpread& s) {
      o += "<tr><td>" + label + "</td><td>" + num(s.min) + "</td><td>" + num(s.median) +
           "</td><td>" + num(s.max) + "</td><td>rank " + std::to_string(s.slowest_rank) +
           "</td><td>" + num(s.imbalance) + "</td><td>" + num(s.wait) + "</td></tr>";
    };
    for (const auto& s : r.steps) row(step_label(s.step), s);
    if (r.steps.size() > 1) row("all", r.total);
    o += "</table>\n";
  }
  if (!report.memory.empty()) {
    o += "<h2>Memory peaks</h2>\n<table><tr><th>region</th><th>device</th><th>min MiB</th>"
         "<th>median MiB</th><th>max MiB</th><th>highest</th><th>imbalance</th></tr>";
    for (const auto& m : report.memory) {
      o += "<tr><td>" + escape_html(m.region) + "</td><td>" + escape_html(m.device) + "</td><td>" +
           num(m.peaks.min / 1048576.0, 1) + "</td><td>" + num(m.peaks.median / 1048576.0, 1) +
           "</td><td>" + num(m.peaks.max / 1048576.0, 1) + "</td><td>rank " +
           std::to_string(m.peaks.slowest_rank) + "</td><td>" + num(m.peaks.imbalance) +
           "</td></tr>";
    }
    o += "</table>\n";
  }
  o += "</body></html>\n";
  return o;
}

}  // namespace regiontrace::cli
