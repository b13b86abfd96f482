// Built without NVTX: no tool to attach.
#include "timeline_bench_anchors.hpp"

namespace regiontrace::bench {
void prepare_anchors() {}
}  // namespace regiontrace::bench
