// keep_last: the seed's second best practice (clean trace directories) done
// by the sink. After each trace it writes, the sink keeps the `keep_last`
// newest traces of its rank in the folder, from this run and earlier ones,
// and removes the older ones with their summaries. Other ranks' files and
// files of other programs are never touched.
#pragma once

#include <string>
#include <vector>

namespace regiontrace::torch_profiler {

// The traces the sink writes: "torch_trace[_<n>]_rank<R>_pid<P>[.<step>]"
// ("_step-<N>" before the rank for a negative first step) followed by
// ".pt.trace.json" or ".pt.trace.json.gz"; the older "torch_trace_step<N>_..."
// names and ".json"/".json.gz" traces without ".pt.trace" are recognized too.
bool is_trace_file(const std::string& file_name, int rank);

// Removes all but the `keep` newest traces of `rank` in `dir` (by
// modification time, then name) and their summaries (in summaries/, or
// beside the trace where earlier versions wrote them). Returns the paths
// removed. keep <= 0 keeps everything.
std::vector<std::string> remove_old_traces(const std::string& dir, int rank, long long keep);

// FastVideo's layout: the same for this process's own traces (the names
// carry no rank); summary_rank<r> stays, it describes the newest.
std::vector<std::string> remove_old_fastvideo_traces(const std::string& dir, long pid,
                                                     long long keep);

}  // namespace regiontrace::torch_profiler
