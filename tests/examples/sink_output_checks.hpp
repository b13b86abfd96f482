// What each built-in sink must have written after an example ran under a
// profile: the files are found, parsed with a real JSON parser and checked
// against what the example did (its regions, steps, blocks and tensors).
// Failures are reported through GoogleTest assertions.
#pragma once

#include <set>
#include <string>
#include <vector>

namespace regiontrace::test {

// What one example run did, as far as the sinks can see it.
struct ExampleShape {
  std::string name;                        // "video_pipeline", "training_loop"
  std::string hot_region;                  // the region every step runs in
  std::vector<std::string> phases;         // top-level regions it opens, in order
  std::vector<std::string> block_modules;  // "blocks.0", ... every step
  int steps = 0;                           // set_step() values 0 .. steps - 1
  std::vector<std::string> observed;       // tensors it observes outside modules
};

ExampleShape small_video_shape();     // matches small_video_args()
ExampleShape small_training_shape();  // matches small_training_args()

struct TorchProfilerExpectations {
  std::string prefix = "regiontrace";
  std::string region;                // a span that must be there ("profiler_region_...")
  std::set<long long> window_steps;  // the trace's step window (first, last); empty: none
  std::set<long long> span_steps;    // steps of the spans opened after a set_step()
  bool block_spans = false;          // "blocks.N" spans expected
  bool record_shapes = false;
};

// One trace file with region spans, collection markers and aten ops, and its
// op summary (.summary.json / .summary.txt) in summaries/ beside it.
void check_torch_profiler_output(const std::string& dir, const TorchProfilerExpectations& expect);
// JSONL records of every block output and observed tensor, with `stats`.
void check_activation_trace_output(const std::string& dir, const ExampleShape& example,
                                   const std::vector<std::string>& stats);
// Per-region memory records with cpu entry/exit/peak figures, and the summary.
void check_memory_snapshot_output(const std::string& dir, const ExampleShape& example);
// region_stats_rank0_pid*.json: every phase, the hot region and each block
// counted, totals within the run's wall time, one step row per step.
void check_region_stats_output(const std::string& dir, const ExampleShape& example);
// timeline_rank0_pid*.json.gz: a span per phase at depth 0, the hot region
// and each block every step, one ProfilerStep#<n> span per step on the steps
// track, every span inside the trace's extent and its thread's stack.
void check_timeline_output(const std::string& dir, const ExampleShape& example);
// The NVTX calls the recording injection saw: a range per region, step payloads.
void check_nvtx_records(const std::string& record_dir, const ExampleShape& example,
                        const std::string& prefix);

}  // namespace regiontrace::test
