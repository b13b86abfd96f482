// Where the time in a Chrome trace went (`regiontrace summary`): total and self
// time per region span and per op name, from its spans (trace_spans.hpp, which
// says what a span, a region span and a step span are). GPU work is reported
// apart from CPU ops, since it runs concurrently.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "trace_spans.hpp"

namespace regiontrace::cli {

struct SpanTotals {
  std::string name;
  std::string category;  // of the first span seen with this name
  std::uint64_t calls = 0;
  double total_us = 0;
  double self_us = 0;
  double min_us = 0;
  double max_us = 0;
};

// One step (--by-step): its wall time and its regions.
struct StepTotals {
  std::int64_t step = 0;
  double wall_us = 0;
  bool from_step_span = false;      // else: first region start to last region end
  std::vector<SpanTotals> regions;  // unsorted
};

// The ops that ran inside a region's spans, on their threads (--inside).
struct InsideTotals {
  std::string region;
  std::size_t region_spans = 0;
  double region_total_us = 0;
  std::vector<SpanTotals> ops;  // self and total within the region; unsorted
};

struct SummaryOptions {
  bool by_step = false;
  std::string inside;  // region name or path, or empty
};

struct TraceSummary {
  std::size_t events = 0;
  std::size_t spans = 0;
  std::size_t processes = 0;
  std::size_t threads = 0;
  std::size_t unmatched = 0;  // B without E or E without B
  double wall_us = 0;         // from the first event to the end of the latest span or event
  // Unsorted; the caller orders and cuts them.
  std::vector<SpanTotals> regions;
  std::vector<SpanTotals> ops;
  std::vector<SpanTotals> gpu;
  std::vector<StepTotals> steps;          // with options.by_step, in step order
  std::optional<InsideTotals> inside;     // with options.inside, when the region is there
  std::vector<std::string> region_names;  // every region seen (for error messages)
  std::string unfinished;                 // unfinished_note() of the file read
};

// The tables of `trace`; with options.by_step its steps, spans crossing a
// step boundary split between them (step_cut.hpp).
TraceSummary summarize_spans(const TraceSpans& trace, const SummaryOptions& options = {});
// The ops inside `region`'s spans (a region name or args.path); nullopt
// when the trace has none.
std::optional<InsideTotals> inside_totals(const TraceSpans& trace, const std::string& region);

}  // namespace regiontrace::cli
