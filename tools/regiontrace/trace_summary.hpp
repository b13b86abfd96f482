// Where the time in a Chrome trace went (`regiontrace summary`): total and self
// time per region span and per op name.
//
// - Spans are complete events (ph X with ts and dur) and matched B/E pairs on
//   one thread. Spans nest and self time is computed by the rule of
//   regiontrace/sdk/span_nesting.hpp (the torch_profiler sink's summary uses
//   the same), per thread (pid, tid).
// - Region spans are those named `<prefix>.region::<name>` (what the
//   torch_profiler sink emits); they are reported by <name>.
// - GPU work (category "kernel" or "gpu_*") is reported apart from CPU ops,
//   since it runs concurrently. "gpu_user_annotation" spans, Kineto's copies
//   of CPU annotations on the GPU timeline, are left out so regions do not
//   count twice.
#pragma once

#include <cstddef>
#include <cstdint>
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
};

TraceSummary summarize_trace(const ChromeTrace& trace);

}  // namespace regiontrace::cli
