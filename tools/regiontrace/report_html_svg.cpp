#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "regiontrace/sdk/text_format.hpp"
#include "regiontrace/sdk/trace_time.hpp"
#include "report_html_parts.hpp"
#include "report_output.hpp"

namespace regiontrace::cli::html {
namespace {

// A plot's area inside its SVG and the value at its top.
struct Frame {
  double left = 60;
  double top = 20;
  double width = 0;
  double height = 0;
  double ymin = 0;
  double ymax = 1;

  double y_of(double v) const { return top + height * (1 - (v - ymin) / (ymax - ymin)); }
};

std::string text(double x, double y, const std::string& body, const char* anchor = "middle",
                 int size = 11) {
  return "<text x=\"" + num(x, 1) + "\" y=\"" + num(y, 1) + "\" text-anchor=\"" + anchor +
         "\" font-size=\"" + std::to_string(size) + "\">" + body + "</text>";
}

// `title`: the tooltip, as HTML.
std::string rect(double x, double y, double w, double h, const std::string& attributes,
                 const std::string& title = "") {
  const std::string open = "<rect x=\"" + num(x, 2) + "\" y=\"" + num(y, 2) + "\" width=\"" +
                           num(w, 2) + "\" height=\"" + num(h, 2) + "\" " + attributes;
  return title.empty() ? open + "/>" : open + "><title>" + title + "</title></rect>";
}

// The axes, four ticks up to ymax, and the unit along the y axis.
std::string axes(const Frame& f, const std::string& unit) {
  const double bottom = f.top + f.height;
  std::string o = "<line x1=\"" + num(f.left, 0) + "\" y1=\"" + num(bottom, 0) + "\" x2=\"" +
                  num(f.left + f.width, 0) + "\" y2=\"" + num(bottom, 0) + "\" stroke=\"#444\"/>";
  o += "<line x1=\"" + num(f.left, 0) + "\" y1=\"" + num(f.top, 0) + "\" x2=\"" + num(f.left, 0) +
       "\" y2=\"" + num(bottom, 0) + "\" stroke=\"#444\"/>";
  // Enough decimals that ticks a small range apart still differ.
  const double step = (f.ymax - f.ymin) / 4;
  const int decimals =
      step >= 1 ? (f.ymax < 10 ? 2 : 1)
                : std::min(6, 1 + static_cast<int>(std::ceil(-std::log10(std::max(step, 1e-9)))));
  for (int tick = 0; tick <= 4; ++tick) {
    const double v = f.ymin + (f.ymax - f.ymin) * tick / 4;
    o += text(f.left - 6, f.y_of(v) + 4, num(v, decimals), "end");
  }
  const std::string mid = num(f.top + f.height / 2, 0);
  o += "<text x=\"14\" y=\"" + mid + "\" font-size=\"12\" transform=\"rotate(-90 14 " + mid +
       ")\" text-anchor=\"middle\">" + escape(unit) + "</text>";
  return o;
}

std::string svg_open(const char* cls, double width, double height, const std::string& data) {
  return "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"" + std::string(cls) + "\" width=\"" +
         num(width, 0) + "\" height=\"" + num(height, 0) + "\"" + data + ">";
}

std::size_t rank_index(const std::vector<std::int64_t>& ranks, std::int64_t rank) {
  return static_cast<std::size_t>(std::find(ranks.begin(), ranks.end(), rank) - ranks.begin());
}

// Lines drawn first are wider: where ranks' lines coincide, each still
// shows as a band around the next.
double stroke_width(std::size_t index, std::size_t count) {
  return 1.5 + 2.5 * static_cast<double>(count - 1 - std::min(index, count - 1)) /
                   static_cast<double>(std::max<std::size_t>(count, 2) - 1);
}

// A black triangle over (x, y): the straggler mark.
std::string triangle(double x, double y) {
  return "<polygon class=\"straggler-mark\" points=\"" + num(x - 4, 1) + "," + num(y - 8, 1) + " " +
         num(x + 4, 1) + "," + num(y - 8, 1) + " " + num(x, 1) + "," + num(y - 2, 1) +
         "\" fill=\"" + kMarkInk + "\"/>";
}

// A rank's bar in one step: (region, ms) bottom up.
std::vector<std::pair<std::string, double>> segments(const StepBreakdown& b, std::int64_t rank,
                                                     const std::vector<std::string>& stack) {
  std::vector<std::pair<std::string, double>> out;
  double sum = 0;
  auto regions = b.self_ms.find(rank);
  if (regions != b.self_ms.end()) {
    for (const auto& name : stack) {
      auto it = regions->second.find(name);
      if (it == regions->second.end() || it->second <= 0) continue;
      out.emplace_back(name, it->second);
      sum += it->second;
    }
  }
  auto step = b.step_ms.find(rank);
  if (step != b.step_ms.end() && step->second > sum) {
    out.emplace_back(kOutsideRegions, step->second - sum);
  }
  return out;
}

}  // namespace

std::string escape(const std::string& text) {
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

std::string num(double v, int decimals) {
  return sdk::text::fixed(v, decimals);
}

std::string rank_colour(std::size_t index) {
  // Saturated, and no grey: grey and black are the marks' inks.
  static const char* const kPalette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
                                         "#9467bd", "#8c564b", "#e377c2", "#bcbd22",
                                         "#17becf", "#393b79", "#637939", "#843c39"};
  constexpr std::size_t kSize = sizeof(kPalette) / sizeof(kPalette[0]);
  if (index < kSize) return kPalette[index];
  // Hues a golden angle apart never repeat.
  return "hsl(" + num(std::fmod(static_cast<double>(index) * 137.508, 360.0), 2) + ",70%,38%)";
}

std::string region_colour(std::size_t index) {
  // Palest first: the regions most runs have are the least like a rank.
  static const char* const kPalette[] = {"#8dd3c7", "#ffffb3", "#bebada", "#ccebc5",
                                         "#fccde5", "#d4b9da", "#ffed6f", "#c7e9c0",
                                         "#b3de69", "#80b1d3", "#fdb462", "#fb8072"};
  constexpr std::size_t kSize = sizeof(kPalette) / sizeof(kPalette[0]);
  if (index < kSize) return kPalette[index];
  return "hsl(" + num(std::fmod(static_cast<double>(index) * 137.508, 360.0), 2) + ",60%,82%)";
}

std::string overview_svg(const Report& report, const std::vector<std::string>& stack,
                         const std::set<std::int64_t>& stragglers) {
  const auto& ranks = report.ranks;
  std::vector<const StepBreakdown*> steps;
  for (const auto& b : report.breakdown) steps.push_back(&b);
  if (steps.empty() || ranks.empty()) return "";
  // Past a few hundred bars they are too thin to read: the first steps only.
  constexpr std::size_t kMaxBars = 480;
  const std::size_t shown =
      std::min(steps.size(), std::max<std::size_t>(1, kMaxBars / ranks.size()));
  constexpr double kGap = 10;
  Frame f;
  f.height = 220;
  const double bars = static_cast<double>(shown * ranks.size());
  const double bw =
      std::clamp((1180 - f.left - 20 - kGap * static_cast<double>(shown)) / bars, 3.0, 26.0);
  const double group = bw * static_cast<double>(ranks.size()) + kGap;
  f.width = group * static_cast<double>(shown);
  const double width = std::max(320.0, f.left + f.width + 20);
  const double height = f.top + f.height + 52;
  f.ymax = 0;
  for (std::size_t i = 0; i < shown; ++i) {
    for (auto rank : ranks) {
      double sum = 0;
      for (const auto& [name, ms] : segments(*steps[i], rank, stack)) sum += ms;
      f.ymax = std::max(f.ymax, sum);
    }
  }
  if (f.ymax <= 0) f.ymax = 1;
  std::string o = svg_open("overview", width, height, "");
  o += axes(f, "ms");
  const double base = f.top + f.height;
  for (std::size_t i = 0; i < shown; ++i) {
    const StepBreakdown& b = *steps[i];
    const std::string label = b.step == kWholeRun ? "run" : std::to_string(b.step);
    const double x0 = f.left + group * static_cast<double>(i) + kGap / 2;
    for (std::size_t k = 0; k < ranks.size(); ++k) {
      const std::int64_t rank = ranks[k];
      const double x = x0 + bw * static_cast<double>(k);
      const bool slow = stragglers.count(rank) > 0;
      o += "<g class=\"bar\" data-step=\"" + label + "\" data-rank=\"" + std::to_string(rank) +
           "\"" + (slow ? " data-straggler=\"1\"" : "") + ">";
      double acc = 0;
      for (const auto& [name, ms] : segments(b, rank, stack)) {
        const auto at = std::find(stack.begin(), stack.end(), name);
        const std::string fill = at == stack.end()
                                     ? std::string(kOutsideFill)
                                     : region_colour(static_cast<std::size_t>(at - stack.begin()));
        const double h = f.height * ms / f.ymax;
        o += rect(x, f.y_of(acc + ms), bw - 1, h,
                  "class=\"segment\" data-region=\"" + escape(name) + "\" data-ms=\"" + num(ms, 6) +
                      "\" fill=\"" + fill + "\" stroke=\"#fff\" stroke-width=\"0.5\"",
                  "rank " + std::to_string(rank) + ", " + step_label(b.step) + ", " + escape(name) +
                      ": " + num(ms) + " ms");
        acc += ms;
      }
      o += rect(x, base + 3, bw - 1, 5,
                "class=\"rank-key\" data-rank=\"" + std::to_string(rank) + "\" fill=\"" +
                    rank_colour(k) + "\"");
      if (report.is_profiled(rank, b.step)) {
        o += "<circle class=\"profiled-mark\" cx=\"" + num(x + (bw - 1) / 2, 2) + "\" cy=\"" +
             num(base + 13, 1) + "\" r=\"2\" fill=\"" + kProfiledInk + "\"><title>rank " +
             std::to_string(rank) + ", " + step_label(b.step) +
             ": profiled (torch_profiler collection window)</title></circle>";
      }
      if (slow && acc > 0) {
        o += rect(x - 0.5, f.y_of(acc) - 0.5, bw, f.height * acc / f.ymax + 1,
                  std::string("class=\"straggler-mark\" fill=\"none\" stroke=\"") + kMarkInk +
                      "\" stroke-width=\"1.5\"");
        o += triangle(x + (bw - 1) / 2, f.y_of(acc));
      }
      o += "</g>";
    }
    o += text(x0 + (group - kGap) / 2, base + 30, label);
  }
  o += text(f.left + f.width / 2, height - 6, "step (a bar per rank)", "middle", 12);
  o += "</svg>";
  if (shown < steps.size()) {
    o += "<p class=\"note\">The first " + std::to_string(shown) + " of " +
         std::to_string(steps.size()) + " steps; the tables below have them all.</p>";
  }
  return o;
}

std::string line_plot(const RegionReport& r, const std::vector<std::int64_t>& ranks) {
  constexpr double kW = 640, kH = 280, kRight = 110;
  Frame f;
  f.width = kW - f.left - kRight;
  f.height = kH - f.top - 40;
  f.ymax = 0;
  for (const auto& s : r.steps) f.ymax = std::max(f.ymax, s.max);
  if (f.ymax <= 0) f.ymax = 1;
  const std::size_t n = r.steps.size();
  const double pitch = n <= 1 ? f.width : f.width / static_cast<double>(n - 1);
  // Ranks with equal times would hide each other's line: each rank is
  // shifted a little to the side.
  const double dodge = std::min(4.0, pitch / static_cast<double>(ranks.size() + 2));
  auto x_of = [&](std::size_t i, std::size_t k) {
    const double centre = f.left + (n <= 1 ? f.width / 2 : pitch * static_cast<double>(i));
    return centre + dodge * (static_cast<double>(k) - (static_cast<double>(ranks.size()) - 1) / 2);
  };
  std::string o = svg_open("plot", kW, kH, " data-region=\"" + escape(r.region) + "\"");
  o += axes(f, "ms");
  for (std::size_t i = 0; i < n; ++i) {
    o += text(f.left + (n <= 1 ? f.width / 2 : pitch * static_cast<double>(i)),
              f.top + f.height + 16,
              r.steps[i].step == kWholeRun ? "run" : std::to_string(r.steps[i].step));
  }
  o += text(f.left + f.width / 2, kH - 4, "step", "middle", 12);
  for (std::size_t k = 0; k < ranks.size(); ++k) {
    const std::int64_t rank = ranks[k];
    const std::string c = rank_colour(k);
    std::string points;
    std::string dots;
    for (std::size_t i = 0; i < n; ++i) {
      auto it = r.steps[i].values.find(rank);
      if (it == r.steps[i].values.end()) continue;
      const std::string x = num(x_of(i, k), 1);
      const std::string y = num(f.y_of(it->second), 1);
      points += (points.empty() ? "" : " ") + x + "," + y;
      dots += "<circle cx=\"" + x + "\" cy=\"" + y + "\" r=\"3\" fill=\"" + c + "\"><title>rank " +
              std::to_string(rank) + ", " + step_label(r.steps[i].step) + ": " + num(it->second) +
              " ms</title></circle>";
    }
    if (points.empty()) continue;
    o += "<g class=\"series\" data-rank=\"" + std::to_string(rank) + "\">";
    o += "<polyline fill=\"none\" stroke=\"" + c + "\" stroke-width=\"" +
         num(stroke_width(k, ranks.size()), 2) + "\" points=\"" + points + "\"/>" + dots;
    const double ly = f.top + 14.0 * static_cast<double>(k);
    o += rect(kW - kRight + 10, ly, 10, 10, "fill=\"" + c + "\"") +
         text(kW - kRight + 24, ly + 9, "rank " + std::to_string(rank), "start") + "</g>";
  }
  return o + "</svg>";
}

std::string rank_plot(const RegionReport& r, const std::vector<std::int64_t>& ranks,
                      const std::set<std::int64_t>& stragglers) {
  constexpr double kH = 280, kColumn = 48;
  Frame f;
  f.width = kColumn * static_cast<double>(ranks.size()) + 10;
  f.height = kH - f.top - 40;
  f.ymax = 0;
  for (const auto& s : r.steps) f.ymax = std::max(f.ymax, s.max);
  if (f.ymax <= 0) f.ymax = 1;
  const double width = f.left + f.width + 10;
  std::string o = svg_open("rank-plot", width, kH, " data-region=\"" + escape(r.region) + "\"");
  o += axes(f, "ms");
  for (std::size_t k = 0; k < ranks.size(); ++k) {
    const std::int64_t rank = ranks[k];
    const double x = f.left + kColumn * (static_cast<double>(k) + 0.5);
    const std::string c = rank_colour(k);
    std::vector<double> values;
    o += "<g class=\"rank-column\" data-rank=\"" + std::to_string(rank) + "\">";
    for (const auto& s : r.steps) {
      auto it = s.values.find(rank);
      if (it == s.values.end()) continue;
      values.push_back(it->second);
      o += "<circle cx=\"" + num(x, 1) + "\" cy=\"" + num(f.y_of(it->second), 1) +
           "\" r=\"2.5\" fill=\"" + c + "\" fill-opacity=\"0.7\"><title>rank " +
           std::to_string(rank) + ", " + step_label(s.step) + ": " + num(it->second) +
           " ms</title></circle>";
    }
    if (!values.empty()) {
      std::sort(values.begin(), values.end());
      const std::size_t n = values.size();
      const double median = n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
      o += "<line x1=\"" + num(x - 14, 1) + "\" x2=\"" + num(x + 14, 1) + "\" y1=\"" +
           num(f.y_of(median), 1) + "\" y2=\"" + num(f.y_of(median), 1) + "\" stroke=\"" + c +
           "\" stroke-width=\"2\"><title>rank " + std::to_string(rank) + " median " + num(median) +
           " ms</title></line>";
      if (stragglers.count(rank) > 0) {
        o += rect(x - 18, f.y_of(values.back()) - 4, 36,
                  f.y_of(values.front()) - f.y_of(values.back()) + 8,
                  std::string("class=\"straggler-mark\" fill=\"none\" stroke=\"") + kMarkInk +
                      "\" stroke-width=\"1.5\" stroke-dasharray=\"4 2\"");
        o += triangle(x, f.y_of(values.back()) - 4);
      }
    }
    o += text(x, f.top + f.height + 16, std::to_string(rank)) + "</g>";
  }
  o += text(f.left + f.width / 2, kH - 4, "rank", "middle", 12);
  return o + "</svg>";
}

std::string counter_plot(const Report& report, const std::string& name) {
  std::vector<const CounterTrack*> tracks;
  bool wall = true;
  for (const auto& t : report.counters) {
    if (t.name != name || t.samples.empty()) continue;
    tracks.push_back(&t);
    wall &= t.wall_clock;
  }
  if (tracks.empty()) return "";
  // Ranks side by side on the wall clock when every trace gives it; else
  // each from its own first sample.
  std::int64_t first = INT64_MAX;
  for (const auto* t : tracks) first = std::min(first, t->samples.front().first);
  const bool bytes = name.find("bytes") != std::string::npos;
  const double scale = bytes ? 1.0 / 1048576.0 : 1.0;
  double xmax = 0;
  Frame f;
  f.ymin = std::numeric_limits<double>::infinity();
  f.ymax = -std::numeric_limits<double>::infinity();
  for (const auto* t : tracks) {
    const std::int64_t origin = wall ? first : t->samples.front().first;
    for (const auto& [ns, v] : t->samples) {
      xmax = std::max(xmax, sdk::units::to_seconds(ns - origin));
      f.ymin = std::min(f.ymin, v * scale);
      f.ymax = std::max(f.ymax, v * scale);
    }
  }
  // From the lowest sample, not from 0: what a reader looks for is how the
  // figure moves, which a level of gigabytes flattens.
  if (f.ymax - f.ymin < 1e-9 * std::max(1.0, std::fabs(f.ymax))) {
    f.ymin -= 1;
    f.ymax += 1;
  }
  if (xmax <= 0) xmax = 1;
  constexpr double kW = 640, kH = 240, kRight = 110;
  f.width = kW - f.left - kRight;
  f.height = kH - f.top - 40;
  std::string o = svg_open("memory-plot", kW, kH, " data-counter=\"" + escape(name) + "\"");
  o += axes(f, bytes ? "MiB" : "value");
  for (int tick = 0; tick <= 4; ++tick) {
    const double s = xmax * tick / 4;
    o += text(f.left + f.width * tick / 4, f.top + f.height + 16, num(s, s < 10 ? 2 : 1));
  }
  o += text(f.left + f.width / 2, kH - 4,
            wall ? "s since the first sample of any rank" : "s since each rank's first sample",
            "middle", 12);
  std::size_t legend = 0;
  for (const auto* t : tracks) {
    const std::size_t k = rank_index(report.ranks, t->rank);
    const std::string c = rank_colour(k);
    const std::int64_t origin = wall ? first : t->samples.front().first;
    std::string points;
    double peak = 0;
    for (const auto& [ns, v] : t->samples) {
      points += (points.empty() ? "" : " ") +
                num(f.left + f.width * (static_cast<double>(ns) - static_cast<double>(origin)) /
                                 1e9 / xmax,
                    1) +
                "," + num(f.y_of(v * scale), 1);
      peak = std::max(peak, v * scale);
    }
    o += "<g class=\"counter-series\" data-rank=\"" + std::to_string(t->rank) + "\">";
    o += "<polyline fill=\"none\" stroke=\"" + c + "\" stroke-width=\"" +
         num(stroke_width(legend, tracks.size()), 2) + "\" points=\"" + points + "\"><title>rank " +
         std::to_string(t->rank) + ": highest " + num(peak, 1) + (bytes ? " MiB" : "") +
         "</title></polyline>";
    const double ly = f.top + 14.0 * static_cast<double>(legend++);
    o += rect(kW - kRight + 10, ly, 10, 10, "fill=\"" + c + "\"") +
         text(kW - kRight + 24, ly + 9, "rank " + std::to_string(t->rank), "start") + "</g>";
  }
  return o + "</svg>";
}

}  // namespace regiontrace::cli::html
