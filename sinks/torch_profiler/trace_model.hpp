// What one collection window produced, in plain types: the torch ops read
// from libtorch, the region spans and collection markers the sink recorded,
// and the threads they ran on. The trace writer and the op summary work on
// this and never see a libtorch header.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "regiontrace/sdk/clock_sync.hpp"

namespace regiontrace::torch_profiler {

// Every time here is nanoseconds since the Unix epoch (CLOCK_REALTIME), the
// clock libtorch stamps its events with; region times are converted to it.
// The written trace counts from a CLOCK_MONOTONIC base, like every trace
// regiontrace writes (TraceData::realtime_minus_monotonic_ns).

struct OpRecord {
  enum class Kind : std::uint8_t {
    kCpuOp,   // an operator or record_function range on a CPU thread
    kMemory,  // an allocation (bytes > 0) or free (bytes < 0), profile_memory
    kDevice,  // a GPU kernel, memcpy or other device activity (Kineto builds)
  };
  Kind kind = Kind::kCpuOp;
  // Kineto's category ("cpu_op", "kernel", "gpu_memcpy", "cuda_runtime", ...),
  // as torch.profiler writes it for this activity; empty: the kind's usual
  // one (trace_category).
  std::string category;
  std::string name;
  std::uint64_t thread = 0;  // trace tid: the OS thread id where known
  std::int64_t start_ns = 0;
  std::int64_t duration_ns = 0;
  bool has_shapes = false;
  std::vector<std::vector<std::int64_t>> shapes;  // one per input, empty for non-tensors
  std::vector<std::string> dtypes;
  std::uint64_t flops = 0;
  std::vector<std::string> stack;
  std::int64_t bytes = 0;  // kMemory
  int device_type = 0;     // c10::DeviceType as int
  int device_index = -1;
  std::int64_t sequence_nr = -1;
  std::uint64_t fwd_thread = 0;  // the forward op's thread, for ops with a sequence number
  // The event's place in libtorch's list, Kineto's "Ev Idx". -1: none.
  std::int64_t event_index = -1;
  // CUDA activity (libtorch with CUDA): a kernel and the runtime call that
  // launched it share `correlation_id`; both name the op they ran under by
  // `external_id`, which is that op's own `external_id`. 0: none.
  std::uint64_t correlation_id = 0;
  std::uint64_t external_id = 0;
  std::int64_t stream = -1;  // kDevice: the CUDA stream
};

// The category an op is written with: its own, else cpu_op, or kernel for
// device activity read without one.
inline std::string_view trace_category(const OpRecord& op) {
  if (!op.category.empty()) return op.category;
  return op.kind == OpRecord::Kind::kDevice ? "kernel" : "cpu_op";
}

// Device time that is work on the device: kernels, copies and fills. A
// gpu_user_annotation spans other device work and a cuda_sync is a wait, so
// adding either to the others would count the same time twice.
inline bool is_device_work(const OpRecord& op) {
  if (op.kind != OpRecord::Kind::kDevice) return false;
  const std::string_view c = trace_category(op);
  return c == "kernel" || c == "gpu_memcpy" || c == "gpu_memset";
}

// Device activity has a track of its own per (device, stream), above any
// OS thread id, named "cuda:<device> stream <stream>".
inline constexpr std::uint64_t kDeviceTrackBase = std::uint64_t(1) << 40;
inline std::uint64_t device_track(int device, std::int64_t stream) {
  return kDeviceTrackBase + (static_cast<std::uint64_t>(device < 0 ? 0 : device) << 24) +
         static_cast<std::uint64_t>(stream < 0 ? 0 : stream & 0xFFFFFF);
}

struct RegionSpan {
  std::uint32_t region = 0;  // RegionId; the name is resolved when writing
  std::uint64_t thread = 0;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::string path;
  int depth = 0;
  std::int64_t step = 0;
  bool has_step = false;
  bool unwinding = false;      // left by an exception
  bool clipped_begin = false;  // opened before collection started: begins at the window start
  bool open_at_end = false;    // still open when the window was written: ends there
};

// A step, like torch.profiler's ProfilerStep#<n>: from set_step(n) to the
// next set_step, or to the end of the window. Steps have a track of their own
// per process (kStepTrackOffset above the tid of the thread that set them),
// so they never cross the region and op slices of a real thread.
struct StepSpan {
  std::int64_t step = 0;
  std::uint64_t thread = 0;  // the thread that called set_step
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  bool clipped_begin = false;  // set before the window started: begins at its start
  bool open_at_end = false;    // no later set_step in this window: ends at its end
};
inline constexpr std::uint64_t kStepTrackOffset = 1000000000;

struct CollectionMarker {
  bool enable = true;  // enable_collection / disable_collection
  std::uint64_t thread = 0;
  std::int64_t time_ns = 0;
  const char* reason = "";  // a literal: "region", "step", "close", "size_cap"
};

struct ThreadInfo {
  std::uint64_t tid = 0;  // as written in the trace
  std::string name;
};

// A GPU as Kineto lists it in a trace's deviceProperties (its names in the
// comments); TensorBoard's profiler plugin reads them for its GPU views.
struct DeviceProperties {
  int id = 0;
  std::string name;
  std::int64_t total_global_mem = 0;               // totalGlobalMem, bytes
  int compute_major = 0;                           // computeMajor
  int compute_minor = 0;                           // computeMinor
  int max_threads_per_block = 0;                   // maxThreadsPerBlock
  int max_threads_per_multiprocessor = 0;          // maxThreadsPerMultiprocessor
  int regs_per_block = 0;                          // regsPerBlock
  int warp_size = 0;                               // warpSize
  std::int64_t shared_mem_per_block = 0;           // sharedMemPerBlock
  int num_sms = 0;                                 // numSms
  int regs_per_multiprocessor = 0;                 // regsPerMultiprocessor
  std::int64_t shared_mem_per_block_optin = 0;     // sharedMemPerBlockOptin
  std::int64_t shared_mem_per_multiprocessor = 0;  // sharedMemPerMultiprocessor
};

struct TraceData {
  int rank = 0;
  int local_rank = 0;
  int world_size = 1;
  long pid = 0;
  // The offset that converted region times to the epoch clock: the written
  // baseTimeNanoseconds is CLOCK_MONOTONIC (base epoch ns minus this).
  std::int64_t realtime_minus_monotonic_ns = 0;
  // Read when the sink started and when this trace was written.
  sdk::clock_sync::Pair clock_start;
  sdk::clock_sync::Pair clock_end;
  std::string prefix = "regiontrace";
  std::vector<std::string> region_names;  // indexed by RegionId; may be shorter
  std::vector<OpRecord> ops;
  std::vector<RegionSpan> spans;
  std::vector<CollectionMarker> markers;
  std::vector<StepSpan> steps;
  std::vector<ThreadInfo> threads;
  bool record_shapes = false;
  bool shapes_for_flops = false;  // record_shapes is on because with_flops needs it
  bool profile_memory = false;
  bool with_stack = false;
  bool with_flops = false;
  std::int64_t first_step = 0;  // steps this window covered, when set_step() was used
  std::int64_t last_step = 0;
  bool has_steps = false;
  std::string torch_version;
  std::string trace_name;                 // the file's path, Kineto's top-level traceName
  std::vector<DeviceProperties> devices;  // with CUDA activity on a GPU; else none
  // What was dropped while collecting because of the size cap.
  std::int64_t ops_refused = 0;
  std::string cap_reason;  // empty: no cap was reached while collecting

  std::string region_name(std::uint32_t region) const {
    return region < region_names.size() ? region_names[region] : "region#" + std::to_string(region);
  }
  std::string span_name(std::uint32_t region) const {
    return prefix + ".region::" + region_name(region);
  }
};

}  // namespace regiontrace::torch_profiler
