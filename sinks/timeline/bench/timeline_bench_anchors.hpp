// Anchors measured in the timeline bench's run where they are built: raw
// NVTX with the recording tool attached (BM_NvtxRawWithTool) and
// RECORD_USER_SCOPE under the torch profiler (BM_RecordUserScopeUnderProfiler).
#pragma once

namespace regiontrace::bench {

// Attaches the NVTX recording tool (NVTX picks its tool at the first call,
// so this runs before any); nothing where NVTX is not built.
void prepare_anchors();

}  // namespace regiontrace::bench
