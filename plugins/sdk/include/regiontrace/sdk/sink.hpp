// The interface a sink implements. All callbacks have empty defaults: override
// what you need.
//
// Threads: region, mark, tensor and snapshot callbacks run synchronously on
// the application thread that caused them, from many threads at once, so a
// sink must be thread-safe and should not block (queue work, write on a
// thread of your own). on_region_end always comes on the thread that got the
// matching on_region_begin. on_spans: see SpanBatch. on_step runs on the thread that called
// set_step(). on_region_routed runs under the host's registry lock, before
// the first event for that region, on whichever thread registered it.
// close() runs once, at shutdown or when the host switches the sink off;
// callbacks racing with it on other threads may still arrive and should be
// ignored. An exception thrown from any callback switches the sink off (it
// is logged once and close() is called); the application and the other
// sinks go on.
#pragma once

#include "regiontrace/sdk/abi.hpp"

#include <cstdint>

#include "regiontrace/sdk/events.hpp"

REGIONTRACE_SDK_BEGIN_NAMESPACE

// Which event families a sink wants. Tensors are delivered only to sinks that
// ask, which keeps observe() free when nobody does.
enum Interest : std::uint32_t {
  kInterestRegions = 1u << 0,    // on_region_begin/end (and on_region_routed)
  kInterestMarks = 1u << 1,      // on_mark
  kInterestSteps = 1u << 2,      // on_step
  kInterestTensors = 1u << 3,    // on_tensor for observe()/forward()
  kInterestOpOutputs = 1u << 4,  // on_tensor for every aten op output (costly)
  kInterestSnapshots = 1u << 5,  // on_snapshot_request
  // Events carry time_ns (0 otherwise). Reading the clock is the largest cost
  // of a routed region on some machines (a trapped rdtsc in a VM costs
  // ~100 ns): sinks whose tool keeps its own time (NVTX) should leave it out.
  kInterestTimestamps = 1u << 6,
  // Not an event family: the sink writes no files (its output goes to a tool,
  // as NVTX ranges do), so the host creates no output folder for it and
  // writes no effective configuration on its account.
  kWritesNoFiles = 1u << 7,
  // Regions this sink selected come as finished spans, in batches
  // (on_spans), instead of on_region_begin/end: the host records them in a
  // buffer of the thread's own with no call into the sink per region, and
  // hands each thread's buffer over when it fills, when the thread exits and
  // when the host stops (with the regions still open). Always timed. For
  // sinks that keep spans (timelines, statistics) rather than act at once.
  kInterestSpans = 1u << 8,
  // Not an event family: the sink applies its `steps` key itself (from its
  // SinkContext), so the host delivers the events of every step. For a sink
  // that must see regions opened before a selected step to switch on inside
  // them when it starts, as torch_profiler's schedule does.
  kAppliesStepsItself = 1u << 9,
  // Not an event family: the sink is a flight recorder. Every
  // `flush_interval_s` (a top-level key, default 1; 0: never) the host hands
  // over every thread's finished spans so far, then calls flush() from a
  // thread of its own, so that what was recorded reaches the disk while the
  // program runs and survives a SIGKILL. A kInterestSpans sink also gets the
  // regions still open on each thread, as open spans (`open` 1) at the end
  // of that thread's batch, ending at the flush: provisional, since the same
  // region comes again as a finished span when it ends (or open at stop).
  kInterestPeriodicFlush = 1u << 10,
  kInterestDefault =
      kInterestRegions | kInterestMarks | kInterestSteps | kInterestSnapshots | kInterestTimestamps,
};

class Sink {
 public:
  virtual ~Sink() = default;

  // Asked once, right after construction.
  virtual std::uint32_t interests() const { return kInterestDefault; }

  virtual void on_region_routed(const RegionInfo&) {}
  virtual void on_region_begin(const RegionEvent&) {}
  virtual void on_region_end(const RegionEvent&) {}
  virtual void on_step(const StepEvent&) {}
  virtual void on_mark(const MarkEvent&) {}
  virtual void on_tensor(const TensorEvent&) {}
  virtual void on_snapshot_request(const SnapshotRequest&) {}
  // kInterestSpans only. See SpanBatch for the threads it comes on.
  virtual void on_spans(const SpanBatch&) {}

  // Make what was accepted so far durable: by the host before close(), by
  // the application's regiontrace::flush(), and every flush_interval_s from
  // the host's flush thread for kInterestPeriodicFlush sinks. Never
  // concurrently with itself or close().
  virtual void flush() {}
  // Last call: write everything, finish files, stop threads. Idempotent.
  virtual void close() {}
};

REGIONTRACE_SDK_END_NAMESPACE
