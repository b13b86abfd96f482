// Reading what a profiler session collected, as OpRecords: the trace and the
// summary are written from these on every libtorch version (2.x's own
// ProfilerResult::save() file lacks the rank, the caps and the sink's
// metadata, and cannot be capped while it is written).
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

}  // namespace regiontrace::torch_profiler
