// How `regiontrace summary` prints a trace's summary (trace_summary.hpp):
// text tables (default) or one JSON object (--json); docs/cli.md shows both.
// Rows come ordered as they are to be shown.
#pragma once

#include <cstddef>
#include <ostream>
#include <string>

#include "trace_summary.hpp"

namespace regiontrace::cli {

// How the command was asked, which the output shows or follows.
struct SummaryView {
  const std::string& path;
  std::size_t top = 20;  // rows per table; 0: all
  std::string sort;      // "self", "total", or empty: ops by self, regions by total
  bool by_step = false;
};

void print_summary_text(std::ostream& out, const TraceSummary& s, const SummaryView& args);
std::string summary_json(const TraceSummary& s, const SummaryView& args);

}  // namespace regiontrace::cli
