// How `regiontrace report` prints its figures: text tables (default), one
// JSON object (--json), or a self-contained HTML page of inline SVG charts
// (--html; no scripts, no network; report_html.cpp says what it shows).
#pragma once

#include <ostream>
#include <string>

#include "rank_report.hpp"

namespace regiontrace::cli {

void print_report_text(std::ostream& out, const Report& report);
std::string report_json(const Report& report);
std::string report_html(const Report& report);

// "step 3", or "run" for spans outside any step.
std::string step_label(std::int64_t step);

}  // namespace regiontrace::cli
