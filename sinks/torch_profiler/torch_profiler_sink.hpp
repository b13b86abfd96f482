// The torch_profiler sink: libtorch's profiler, collecting only while a
// selected region is open.
//
// - A thread collects from the moment its first selected region opens until
//   its last one closes (nested selected regions count once); spans
//   `<prefix>.region::<name>` and markers `<prefix>.profiler.enable_collection`
//   / `.disable_collection` go into the trace.
// - Threads: each thread that opens a selected region collects its own ops
//   (libtorch's profiler is per thread; see profiler_session.hpp). Threads
//   that inherit a collecting thread's state (autograd workers, at::launch)
//   collect with it. Other threads are not profiled.
// - Windows: one profiler run per trace file: the whole run, or each run of
//   steps the `steps` filter accepts, or each schedule cycle (skip_first,
//   wait, warmup, active, repeat). Warmup steps run the profiler and throw
//   the result away, as torch.profiler does. Without a schedule,
//   trace_per_window ends a window where the last thread inside a selected
//   region leaves it, and the next selected region opens another one.
// - Size: max_events / max_trace_mb stop collection for good when reached;
//   the trace is still written whole. keep_last cleans older traces.
// - Files are written on a thread of the sink's own, when a window ends and
//   at close() (shutdown, normal exit, SIGINT/SIGTERM).
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "collection_window.hpp"
#include "regiontrace/plugin.hpp"
#include "regiontrace/sdk/bounded_queue_writer.hpp"
#include "regiontrace/sdk/clock_sync.hpp"
#include "session_prestart.hpp"
#include "step_schedule.hpp"
#include "thread_states.hpp"
#include "torch_profiler_settings.hpp"
#include "trace_export.hpp"

namespace regiontrace::torch_profiler {

class TorchProfilerSink : public Sink {
 public:
  static SinkSchema schema() { return TorchProfilerSettings::schema(); }
  explicit TorchProfilerSink(const SinkContext& ctx);
  // Closes first: the stopper's jobs point into windows_, destroyed before it.
  ~TorchProfilerSink() override;

  std::uint32_t interests() const override {
    // Its `steps` filter is part of its schedule, which switches collection
    // on inside regions already open when a selected step begins.
    return kInterestRegions | kInterestSteps | kInterestTimestamps | kAppliesStepsItself;
  }
  void on_region_routed(const RegionInfo& info) override;
  void on_region_begin(const RegionEvent& e) override;
  void on_region_end(const RegionEvent& e) override;
  void on_step(const StepEvent& e) override;
  void close() override;

 private:
  // *_locked functions run under control_.
  CollectionWindow* ensure_window_locked(std::int64_t time_ns);
  // The open step's span up to end_ns, into w (clipped to w's start).
  void add_open_step_locked(CollectionWindow& w, std::int64_t end_ns, bool open_at_end);
  // Switches collection on for the calling thread; under ts.mutex, and no
  // other lock: a session refuses attachments once it is finished.
  void attach(ThreadState& ts, CollectionWindow& w, std::int64_t time_ns, const char* reason);
  void finish_window_locked(const char* reason);  // reason: a literal, for the markers
  // trace_per_window: `w` lost its last attached thread; finishes it unless
  // a thread attached again (or it was finished) meanwhile. Takes control_.
  void finish_idle_window(CollectionWindow* w);
  void say_window_closed(const CollectionWindow& w, const char* reason);
  // Starts the next window's profiler session on the stopper thread, after
  // the previous one's stop (one profiler per process).
  void prestart_next_locked();
  // finish_window_locked's steps: the threads' spans and markers of window
  // `w` (those still open end at `now`); the trace to write, its times
  // made the trace's; handing it to the writer thread.
  void take_thread_records_locked(CollectionWindow& w, std::int64_t now, const char* reason,
                                  std::vector<RegionSpan>* spans,
                                  std::vector<CollectionMarker>* markers);
  std::shared_ptr<ExportRequest> export_request(CollectionWindow& w, CollectionWindow::Records rec,
                                                std::vector<RegionSpan> spans,
                                                std::vector<CollectionMarker> markers, bool capped);
  // On the writer thread: stops the session's profiler and writes `request`
  // (none: the window is not written, its profiler is stopped all the same).
  void post_export(ProfilerSession* session, std::shared_ptr<ExportRequest> request);
  void stop_if_capped();
  static void place_cap_markers(std::int64_t cut_ns, std::vector<CollectionMarker>* markers);
  std::string next_path_base(const CollectionWindow::Records& records);

  SinkContext ctx_;
  TorchProfilerSettings settings_;
  StepSchedule schedule_;
  bool per_window_ = false;  // trace_per_window, without a schedule
  ThreadStates threads_;
  // Trace exports, one job each, run in order on the SDK writer's thread so
  // formatting and compressing a large trace never runs on the
  // application's thread. Started on first use: many runs export nothing.
  using ExportJob = std::function<void()>;
  sdk::BoundedQueueWriter<ExportJob> writer_;
  // Stopping libtorch's profiler after a window closed, on a thread of its
  // own: the next window's start waits for it, never for an export.
  // Declared after writer_: destroyed (joined) first, as it feeds writer_.
  sdk::BoundedQueueWriter<ExportJob> stopper_;
  // After stopper_, whose jobs start its sessions; made once the settings are read.
  std::unique_ptr<SessionPrestart> prestart_;

  std::mutex control_;  // windows: start, finish, attach; the step gate
  std::vector<std::unique_ptr<CollectionWindow>> windows_;  // kept: frames point into them
  std::atomic<CollectionWindow*> live_{nullptr};
  std::atomic<bool> collecting_{true};  // the step gate is open and nothing stopped us
  StepDecision gate_;
  bool has_step_ = false;
  bool saw_step_ = false;  // set_step() was called at some point of the run
  std::int64_t step_ = 0;
  // The step under way, from its set_step: it becomes a ProfilerStep#<n>
  // span in every window it overlaps.
  struct OpenStep {
    bool open = false;
    std::int64_t step = 0;
    std::int64_t begin_ns = 0;  // steady clock
    std::uint64_t thread = 0;
  };
  OpenStep open_step_;
  sdk::clock_sync::Pair clock_start_ = sdk::clock_sync::read();
  bool stopped_ = false;  // for good: size cap reached or the profiler failed to start
  bool closed_ = false;
  std::atomic<bool> warned_foreign_{false};
  std::int64_t ops_refused_ = 0;  // by the last finished window
  std::int64_t late_op_ends_before_ = ProfilerSession::late_op_ends();  // other sinks' ones
  std::atomic<int> traces_posted_{0};

  std::mutex names_mutex_;
  std::vector<std::string> region_names_;  // by RegionId
};

}  // namespace regiontrace::torch_profiler
