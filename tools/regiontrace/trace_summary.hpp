// Where the time in a Chrome trace went (`regiontrace summary`): total and self
// time per region span and per op name.
//
// - Spans are complete events (ph X with ts and dur) and matched B/E pairs on
//   one thread. Spans nest and self time is computed by the rule of
//   regiontrace/sdk/span_nesting.hpp (the torch_profiler sink's summary uses
//   the same), per thread (pid, tid).
// - Region spans follow the conventions every regiontrace sink uses, whoever
//   wrote them: args.region, or a name `<prefix>.region::<name>` /
//   `region::<name>` (torch_profiler, timeline), or category "region" (the
//   memory_snapshot sink's counter trace). They are reported by region name.
// - Step spans (ProfilerStep#N, step_span.hpp) are not ops: they give the step
//   of the region spans they contain, when those carry no args.step.
// - GPU work (category "kernel" or "gpu_*") is reported apart from CPU ops,
//   since it runs concurrently. "gpu_user_annotation" spans, Kineto's copies
//   of CPU annotations on the GPU timeline, are left out so regions do not
//   count twice.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "chrome_trace_reader.hpp"

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
  double first_us = 0;
  double last_us = 0;  // end of the latest span or event
  // Unsorted; the caller orders and cuts them.
  std::vector<SpanTotals> regions;
  std::vector<SpanTotals> ops;
  std::vector<SpanTotals> gpu;
  std::vector<StepTotals> steps;          // with options.by_step, in step order
  std::optional<InsideTotals> inside;     // with options.inside, when the region is there
  std::vector<std::string> region_names;  // every region seen (for error messages)
  std::string unfinished;                 // unfinished_note() of the file read
};

TraceSummary summarize_trace(const ChromeTrace& trace, const SummaryOptions& options = {});
// The same, reading `path` one event at a time (trace_event_stream.hpp):
// memory holds about 75 bytes per span, not the document. Throws
// std::runtime_error naming the file for what ChromeTrace refuses.
TraceSummary summarize_trace_file(const std::string& path, const SummaryOptions& options = {});

}  // namespace regiontrace::cli
