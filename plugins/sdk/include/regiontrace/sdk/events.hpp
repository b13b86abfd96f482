// What a sink is told. Every string_view and pointer in an event is valid only
// for the duration of the callback: copy what you keep.
#pragma once

#include "regiontrace/sdk/abi.hpp"

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string_view>

namespace at {
class Tensor;  // Only sinks that look at tensors include libtorch.
}

REGIONTRACE_SDK_BEGIN_NAMESPACE

using RegionId = std::uint32_t;

// `step` in events when the application never called set_step().
inline constexpr std::int64_t kNoStep = std::numeric_limits<std::int64_t>::min();

// Static facts about a region, handed to a sink once per region before its
// first event (Sink::on_region_routed), so a sink can precompute per-region
// state (an NVTX registered string, a colour, a formatted span name).
struct RegionInfo {
  RegionId id = 0;
  std::string_view name;         // the full, registered name
  std::string_view description;  // from the catalog or RT_DECLARE_REGION, may be empty
  std::uint32_t color = 0;       // 0xAARRGGBB from the catalog, 0 = none given
};

struct RegionEvent {
  RegionId id = 0;
  std::string_view name;
  std::string_view path;  // enclosing regions on this thread, outermost first: "outer/inner"
  int depth = 0;          // 0 for a region opened with nothing open around it
  std::int64_t step = kNoStep;
  std::uint64_t thread_id = 0;  // small, stable per-thread number (1, 2, ...)
  std::int64_t time_ns = 0;     // CLOCK_MONOTONIC ns; 0 unless some sink asked kInterestTimestamps
  bool unwinding = false;       // end only: the region is left by an exception
  // End only: the begin event's time_ns (0 without timestamps, or when the
  // begin was not timed, e.g. the region opened before a restart), so a sink
  // gets the duration from the end event alone: time_ns - begin_time_ns.
  std::int64_t begin_time_ns = 0;
};

// A region a kInterestSpans sink selected, recorded by the host when it
// ended (or found still open when the host stopped) and handed over in
// batches: no call per region. Spans of a batch are in the order they ended
// (inner before outer); times are CLOCK_MONOTONIC ns, as time_ns.
struct Span {
  RegionId id = 0;
  std::uint16_t depth = 0;     // as RegionEvent::depth
  std::uint8_t unwinding = 0;  // 1: left by an exception
  // 1: still open when the host stopped; end_ns is the time it stopped.
  std::uint8_t open = 0;
  std::int64_t step = kNoStep;  // at the end (at the stop, for an open span)
  std::int64_t begin_ns = 0;
  std::int64_t end_ns = 0;
};

// One thread's spans. May come on another thread than the one that
// recorded them (when the host stops, it hands over what every thread still
// holds), but never on two threads at once for the same thread_id.
struct SpanBatch {
  std::uint64_t thread_id = 0;  // as RegionEvent::thread_id
  long os_tid = 0;              // the recording thread's Linux thread id
  const Span* spans = nullptr;
  std::size_t count = 0;
  // 1: the thread is exiting and no batch for it follows (a sink may give
  // back what it keeps per thread).
  std::uint32_t last = 0;
  // Spans of this sink the host could not record on this thread since its
  // previous batch (a region the sink opened from its own on_spans, say): a
  // sink adds them to what it reports as dropped. A batch may carry drops
  // and no spans.
  std::uint32_t dropped = 0;
};

struct StepEvent {
  std::int64_t step = kNoStep;
  std::int64_t previous = kNoStep;
  std::uint64_t thread_id = 0;
  std::int64_t time_ns = 0;
};

struct MarkEvent {
  std::string_view name;
  std::string_view path;  // regions open on the calling thread
  std::int64_t step = kNoStep;
  std::uint64_t thread_id = 0;
  std::int64_t time_ns = 0;
};

// A request for a memory (or any other) snapshot: regiontrace::snapshot("why").
struct SnapshotRequest {
  std::string_view reason;
  std::string_view path;
  std::int64_t step = kNoStep;
  std::uint64_t thread_id = 0;
  std::int64_t time_ns = 0;
};

enum class TensorOrigin : std::uint8_t {
  kObserved,  // regiontrace::observe() or regiontrace::forward()
  kOpOutput,  // an aten operator's output, seen by the op observer
};

struct TensorEvent {
  std::string_view label;   // "out", "out[0]", "out.key"
  std::string_view module;  // innermost open region ("blocks.3"), empty outside regions
  std::string_view path;    // all open regions, "inference_denoising/blocks.3"
  std::string_view op;      // aten op name for kOpOutput, empty otherwise
  int depth = 0;
  std::int64_t step = kNoStep;
  std::uint64_t thread_id = 0;
  std::int64_t time_ns = 0;
  TensorOrigin origin = TensorOrigin::kObserved;
  const at::Tensor* tensor = nullptr;  // never null in a delivered event
};

REGIONTRACE_SDK_END_NAMESPACE
