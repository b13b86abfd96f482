// Device activity kept to the collection windows, after the fact.
//
// CUDA activity is collected for a whole profiler session, not switched per
// region: Kineto synchronises the device at every effective
// toggleCollectionDynamic and libtorch logs a warning for each CUDA-only
// toggle (measured on an H200: about 3 ms and one log line per region entry,
// docs/gpu-check.md). Host ops are gated per thread as before (a debug-info
// push, ~0.2 us); device work is kept here when what launched it was inside a
// window: the runtime call's op was recorded, or the call itself ran on a
// thread while that thread collected.
#pragma once

#include <cstddef>

#include "trace_model.hpp"

namespace regiontrace::torch_profiler {

struct DeviceFilterStats {
  std::size_t runtime_calls_left_out = 0;  // cuda_runtime / cuda_driver outside every window
  std::size_t device_records_left_out = 0;
};

// data.markers must hold this window's enable/disable markers (epoch ns, OS
// thread ids, as the sink records them).
DeviceFilterStats keep_device_activity_in_windows(TraceData& data);

}  // namespace regiontrace::torch_profiler
