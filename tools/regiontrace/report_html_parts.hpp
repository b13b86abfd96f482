// The pieces `regiontrace report --html` builds its page from: text and
// colour helpers and the inline SVG charts (report_html_svg.cpp). Colours
// mean one thing each: a rank has one colour on every chart and in every
// legend; regions take pale colours of their own in the stacked bars; marks
// (straggler, profiled step) are drawn in black and grey, never in a colour
// a rank could have.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "rank_report.hpp"

namespace regiontrace::cli::html {

// Straggler marks: an outline and a triangle in this ink.
inline constexpr const char* kMarkInk = "#000000";
// The part of a step no region covers, and the profiled-step mark.
inline constexpr const char* kOutsideFill = "#d9d9d9";
inline constexpr const char* kProfiledInk = "#666666";
inline constexpr const char* kOutsideRegions = "(outside regions)";

std::string escape(const std::string& text);
std::string num(double v, int decimals = 3);
// The colour of the index-th rank of Report::ranks; distinct for any count.
std::string rank_colour(std::size_t index);
// The colour of the index-th region of the stacks; pale, unlike any rank's.
std::string region_colour(std::size_t index);

// Per step, a bar per rank stacked by region (regions in `stack` order,
// then the step's time outside them); bars of `stragglers` outlined.
// Empty when no trace has region spans.
std::string overview_svg(const Report& report, const std::vector<std::string>& stack,
                         const std::set<std::int64_t>& stragglers);
// One region: a line per rank across steps, then each step's values in
// rank columns with the rank's median.
std::string line_plot(const RegionReport& r, const std::vector<std::int64_t>& ranks);
std::string rank_plot(const RegionReport& r, const std::vector<std::int64_t>& ranks,
                      const std::set<std::int64_t>& stragglers);
// One counter track over time, a line per rank.
std::string counter_plot(const Report& report, const std::string& name);

}  // namespace regiontrace::cli::html
