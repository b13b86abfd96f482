// Time per region and step in one rank's trace, for `regiontrace report`.
// Traces are streamed (TraceEventStream), so any size will do.
//
// Region spans are recognised by the conventions every regiontrace sink
// follows, not by which sink wrote them: complete events (ph X) with
// args.region (torch_profiler, timeline), or named "<prefix>.region::<name>"
// / "region::<name>", or of category "region" (memory_snapshot's counter
// trace). A span's time in a step is its overlap with the step spans
// (ProfilerStep#N, step_span.hpp) of its process, so a span that crosses a step
// boundary counts in each step it overlaps; a span that overlaps no step span
// is in its args.step, else in no step (kWholeRun).
//
// For the HTML page it also keeps each step's time by region on the rank's
// busiest thread (its regions' own time, nested ones taken out), the steps a
// torch_profiler trace's collection window covered, and the counter tracks
// (ph C) a memory_snapshot trace carries.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace regiontrace::cli {

// Spans without a step (set_step never called) are counted under this step.
inline constexpr std::int64_t kWholeRun = INT64_MIN;

struct RankRegionTimes {
  std::string source;
  std::optional<std::int64_t> rank;  // what the trace states about itself
  std::string rank_from;
  std::string sink;
  std::size_t region_spans = 0;
  std::string unfinished;  // unfinished_note(): the process never closed the file
  std::string host;        // where it ran, when the trace says
  std::string cpus;        // the CPUs its process could use: "0-3,8"
  // region -> step -> (total ms, spans)
  std::map<std::string, std::map<std::int64_t, double>> ms;
  // Step spans' own duration: step -> ms (when the trace has step spans).
  std::map<std::int64_t, double> step_ms;
  // Events of category cpu_op: a torch trace, whose ops can say what ran
  // slower inside a region (op_slowdown.hpp).
  std::size_t cpu_ops = 0;
  // region -> "pid/tid" (as written) -> its spans [start, end) in ns.
  std::map<std::string, std::map<std::string, std::vector<std::pair<std::int64_t, std::int64_t>>>>
      spans;
  // step -> region -> ms of the region's own time (what its nested regions
  // took is theirs) on the thread with most region time: one thread's
  // regions never overlap, so per step they add up to at most its step span.
  std::map<std::int64_t, std::map<std::string, double>> self_ms;
  // A torch_profiler trace's regiontrace.steps: the first and last step of
  // its collection window, in which the profiler's overhead weighs on times.
  std::optional<std::pair<std::int64_t, std::int64_t>> window_steps;
  // Counter tracks: "<name> (<arg>)" -> (ns, value), at most
  // kCounterSamples per track (the highest of each time slice), time
  // ordered; on the wall clock when counter_wall_clock, else from the
  // trace's base time.
  std::map<std::string, std::vector<std::pair<std::int64_t, double>>> counters;
  bool counter_wall_clock = false;
};

inline constexpr std::size_t kCounterSamples = 512;

// Throws std::runtime_error naming the file when it is not a Chrome trace.
RankRegionTimes read_rank_region_times(const std::string& path);

}  // namespace regiontrace::cli
