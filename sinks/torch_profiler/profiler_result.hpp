// Reading what a profiler session collected: the events as OpRecords, and,
// on libtorch builds with Kineto, libtorch's own trace file.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "profiler_session.hpp"
#include "trace_model.hpp"

namespace regiontrace::torch_profiler {

// `trace_tids` maps RecordFunction thread ids to the tids the trace uses (OS
// thread ids of the threads the sink attached); ids it does not know are
// kept and named in `threads_seen` as "torch thread <id>".
std::vector<OpRecord> read_ops(const CollectedProfile& profile,
                               const std::map<std::uint64_t, std::uint64_t>& trace_tids,
                               std::vector<ThreadInfo>* threads_seen);

// Writes libtorch's own Chrome trace (ProfilerResult::save) to `path`.
// Returns false with the reason when this libtorch cannot (no Kineto).
bool save_torch_trace(CollectedProfile& profile, const std::string& path, std::string* why);

}  // namespace regiontrace::torch_profiler
