#include "torch_profiler_sink.hpp"
#include "regiontrace/sdk/trace_time.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iterator>
#include <map>
#include <stdexcept>

#include "device_properties.hpp"
#include "fastvideo_layout.hpp"
#include "regiontrace/sdk/clock.hpp"
#include "trace_export.hpp"

namespace regiontrace::torch_profiler {
namespace {

// CLOCK_MONOTONIC, the clock RegionEvent::time_ns is in.
std::int64_t steady_now() {
  return sdk::clock::monotonic_ns();
}

RegionSpan span_of(OpenRegion& r, std::uint64_t tid, std::int64_t end_ns) {
  RegionSpan s;
  s.region = r.id;
  s.thread = tid;
  s.start_ns = r.begin_ns;
  s.end_ns = end_ns;
  s.path = std::move(r.path);
  s.depth = r.depth;
  s.step = r.step;
  s.has_step = r.has_step;
  s.clipped_begin = r.clipped_begin;
  return s;
}

}  // namespace

namespace {

sdk::BoundedQueueWriter<std::function<void()>>::Options export_queue_options() {
  sdk::BoundedQueueWriter<std::function<void()>>::Options o;
  o.capacity = 64;  // windows waiting for export; a producer past it waits
  o.on_full = sdk::OnFull::kBlock;
  o.wake_batch = 1;  // each export starts at once
  o.idle_wakeup = std::chrono::seconds(1);
  o.start_on_first_push = true;
  return o;
}

}  // namespace

TorchProfilerSink::TorchProfilerSink(const SinkContext& ctx)
    : ctx_(ctx),
      writer_(export_queue_options(),
              [](std::vector<std::function<void()>>& jobs) {
                for (auto& job : jobs) job();  // export_trace reports its own errors, never throws
              }),
      stopper_(export_queue_options(), [](std::vector<std::function<void()>>& jobs) {
        for (auto& job : jobs) job();  // reports its own errors, never throws
      }) {
  std::vector<std::string> notes;
  settings_ = TorchProfilerSettings::read(ctx, &notes);
  for (const std::string& n : notes) ctx_.warn(n);
  if (settings_.shapes_for_flops) {
    ctx_.info("with_flops: record_shapes is on too (libtorch computes FLOPs from input shapes)");
  }
  if (settings_.profiler.cuda && !ProfilerSession::cuda_available()) {
    ctx_.warn(
        "activities: `cuda` asked for, but this libtorch has no CUDA or sees no GPU: "
        "collecting cpu only");
    settings_.profiler.cuda = false;
  }
  if (!settings_.profiler.cpu && !settings_.profiler.cuda) {
    throw std::runtime_error("activities: nothing left to collect; add `cpu`");
  }
  ProfilerSession::prime(settings_.profiler);
  prestart_ = std::make_unique<SessionPrestart>(settings_.profiler, settings_.op_budget());
  schedule_ = StepSchedule(settings_.schedule, settings_.steps);
  per_window_ = settings_.trace_per_window && !schedule_.scheduled();
  step_ = ctx.current_step();
  has_step_ = step_ != kNoStep;
  gate_ = schedule_.at(has_step_, step_);
  collecting_.store(gate_.collecting());
  // A step set before the sink started runs from now on.
  if (has_step_)
    open_step_ = {true, step_, steady_now(), static_cast<std::uint64_t>(sdk::this_thread_os_tid())};
  saw_step_ = has_step_;
}

TorchProfilerSink::~TorchProfilerSink() {
  close();
}

void TorchProfilerSink::on_region_routed(const RegionInfo& info) {
  std::lock_guard<std::mutex> lock(names_mutex_);
  if (region_names_.size() <= info.id) region_names_.resize(info.id + 1);
  region_names_[info.id] = std::string(info.name);
}

void TorchProfilerSink::on_region_begin(const RegionEvent& e) {
  ThreadState& ts = state_of(threads_, e.thread_id);
  OpenRegion r;
  r.id = e.id;
  r.begin_ns = e.time_ns;
  r.step = e.step;
  r.has_step = e.step != kNoStep;
  r.path = std::string(e.path);
  r.depth = e.depth;
  CollectionWindow* live = live_.load(std::memory_order_acquire);
  {
    std::lock_guard<std::mutex> lock(ts.mutex);
    if (live != nullptr && ts.window == live) {  // nested: collecting already
      r.window = live;
      ts.frames.push_back(std::move(r));
      return;
    }
  }
  // The first selected region of this thread, or the first since the window
  // changed: collection starts here.
  {
    CollectionWindow* w = nullptr;
    // With trace_per_window the last thread leaving a window finishes it at
    // once: attaching under control_ keeps a window from finishing between
    // this thread choosing it and attaching to it.
    std::unique_lock<std::mutex> control(control_, std::defer_lock);
    if (collecting_.load(std::memory_order_relaxed)) {
      if (live != nullptr && !per_window_) {
        w = live;
      } else {
        control.lock();
        w = ensure_window_locked(e.time_ns);
      }
    }
    std::lock_guard<std::mutex> lock(ts.mutex);
    if (w != nullptr) attach(ts, *w, std::max(e.time_ns, w->started_ns()), "region");
    r.window = ts.window;
    // The region that opened the window began while the profiler started:
    // its span begins where collection did, as the step's does.
    if (r.window != nullptr && r.begin_ns < r.window->started_ns()) {
      r.begin_ns = r.window->started_ns();
      r.clipped_begin = true;
    }
    ts.frames.push_back(std::move(r));
  }
  stop_if_capped();
}

void TorchProfilerSink::on_region_end(const RegionEvent& e) {
  ThreadState& ts = state_of(threads_, e.thread_id);
  CollectionWindow* left_empty = nullptr;  // the last attached thread left it
  {
    std::lock_guard<std::mutex> lock(ts.mutex);
    auto it = ts.frames.end();
    while (it != ts.frames.begin() && (it - 1)->id != e.id) --it;
    if (it == ts.frames.begin()) return;  // opened before this sink started
    OpenRegion r = std::move(*(it - 1));
    ts.frames.erase(it - 1);
    if (r.window != nullptr) {
      RegionSpan s = span_of(r, ts.trace_tid(), e.time_ns);
      s.unwinding = e.unwinding;
      ts.records_for(r.window).spans.push_back(std::move(s));
      ProfilerSession::charge(1);  // a trace event, like an op
    }
    if (ts.frames.empty()) {
      // The last selected region of this thread: it stops collecting.
      CollectionWindow* attached = ts.window;
      ts.window = nullptr;
      if (ProfilerSession::detach_current_thread() && attached != nullptr) {
        ts.records_for(attached).markers.push_back({false, ts.trace_tid(), e.time_ns, "region"});
        ProfilerSession::charge(1);
      }
      if (attached != nullptr && attached->thread_detached()) left_empty = attached;
    }
  }
  if (per_window_ && left_empty != nullptr) finish_idle_window(left_empty);
  stop_if_capped();
}

void TorchProfilerSink::on_step(const StepEvent& e) {
  const bool has_step = e.step != kNoStep;
  const StepDecision d = schedule_.at(has_step, e.step);
  ThreadState& caller_state = state_of(threads_, e.thread_id);
  // Thread 0, past the host's tracked threads, is every such thread's: its own id.
  const std::uint64_t caller = static_cast<std::uint64_t>(
      e.thread_id != 0 ? caller_state.trace_tid() : sdk::this_thread_os_tid());
  {
    std::lock_guard<std::mutex> control(control_);
    // The previous step ends here, before a window this step ends is written.
    if (CollectionWindow* w = live_.load()) add_open_step_locked(*w, e.time_ns, false);
    open_step_ = {};
    has_step_ = has_step;
    saw_step_ = saw_step_ || has_step;
    step_ = e.step;
    if (CollectionWindow* w = live_.load()) {
      const bool ends = !d.collecting() || d.cycle != w->cycle() ||
                        (w->phase() == StepPhase::kWarmup && d.phase == StepPhase::kRecord);
      if (ends) {
        finish_window_locked("step");
      } else if (has_step) {
        w->note_step(e.step);
      }
    }
    gate_ = d;
    collecting_.store(d.collecting() && !stopped_ && !closed_);
    if (has_step) open_step_ = {true, e.step, e.time_ns, caller};
    // The next step opens a window: its profiler starts now, on the stopper
    // thread, not inside that step. Not while a window is live: its
    // profiler must stop first (one per process), and stops in that step.
    if (has_step && live_.load() == nullptr && !stopped_ && !closed_ &&
        schedule_.at(true, e.step + 1).collecting()) {
      prestart_next_locked();
    }
  }
  // A step that opens a window while this thread is inside selected regions
  // starts collection here and now; other threads start at their next
  // selected region.
  if (collecting_.load()) {
    ThreadState& ts = caller_state;
    bool wanted = false;
    {
      std::lock_guard<std::mutex> lock(ts.mutex);
      wanted = !ts.frames.empty() && (ts.window == nullptr || ts.window != live_.load());
    }
    if (wanted) {
      // Attached under control_: no window finishes in between (trace_per_window).
      std::lock_guard<std::mutex> control(control_);
      CollectionWindow* w = ensure_window_locked(e.time_ns);
      std::lock_guard<std::mutex> lock(ts.mutex);
      if (w != nullptr) attach(ts, *w, std::max(e.time_ns, w->started_ns()), "step");
    }
  }
  stop_if_capped();
}

void TorchProfilerSink::close() {
  {
    std::lock_guard<std::mutex> control(control_);
    if (closed_) return;
    closed_ = true;
    collecting_.store(false);
    finish_window_locked("close");
  }
  stopper_.close();  // feeds writer_: closed first
  prestart_->discard();
  writer_.close();
  if (const std::int64_t late = ProfilerSession::late_op_ends() - late_op_ends_before_) {
    ctx_.warn(std::to_string(late) +
              " op scope(s) began in a collection window and ended after it closed (a scope "
              "left open across the end of its selected region or step): their ends are not "
              "recorded, and viewers show them unfinished");
  }
  if (traces_posted_.load() == 0) {
    bool never_stepped = false;
    {
      std::lock_guard<std::mutex> control(control_);
      never_stepped = !saw_step_ && (schedule_.scheduled() || !settings_.steps.empty());
    }
    if (never_stepped) {
      // Not the regions' fault: a schedule or a steps filter waits for steps.
      ctx_.warn(
          "no trace written: the schedule (skip_first, wait, warmup, active, repeat) and `steps` "
          "count the steps given to regiontrace::set_step(), and this run set none "
          "(FastVideo's trace_step() is the activation trace's step only); call "
          "regiontrace::set_step(i) at each step, or leave the schedule out to collect every "
          "selected region");
    } else {
      ctx_.info("no trace written: no selected region ran while collection was on");
    }
  }
}

CollectionWindow* TorchProfilerSink::ensure_window_locked(std::int64_t time_ns) {
  if (CollectionWindow* w = live_.load()) return w;
  if (stopped_ || closed_ || !gate_.collecting()) return nullptr;
  try {
    std::unique_ptr<ProfilerSession> session = prestart_->take();
    // Collection begins once the profiler runs: a step or region open
    // before is clipped there, not shown with the start's time and no ops.
    const std::int64_t ready = std::max(time_ns, steady_now());
    windows_.push_back(
        std::make_unique<CollectionWindow>(std::move(session), gate_, has_step_, step_, ready));
  } catch (const std::exception& e) {
    stopped_ = true;
    collecting_.store(false);
    ctx_.warn(std::string(e.what()) +
              ": torch_profiler stands aside for the rest of the run (one profiler per process)");
    return nullptr;
  }
  live_.store(windows_.back().get(), std::memory_order_release);
  // Said as it happens (issue 50): which steps a long run is collecting,
  // without waiting for the trace at the end.
  CollectionWindow& w = *windows_.back();
  std::string said = "collection window " + std::to_string(windows_.size()) + " opened";
  if (has_step_) said += " at step " + std::to_string(step_);
  if (w.phase() == StepPhase::kWarmup) said += " (warmup: the profiler runs, nothing is kept)";
  ctx_.info(said);
  return &w;
}

void TorchProfilerSink::attach(ThreadState& ts, CollectionWindow& w, std::int64_t time_ns,
                               const char* reason) {
  const AttachResult r = w.session().attach_current_thread();
  if (r == AttachResult::kForeignProfiler) {
    if (!warned_foreign_.exchange(true)) {
      ctx_.warn("the application runs the torch profiler itself on thread " + ts.name + " (" +
                std::to_string(ts.os_tid) + ")" +
                ": torch_profiler stands aside on that thread while it does (libtorch allows "
                "one profiler per thread); its regions there are not collected");
    }
    return;
  }
  if (r == AttachResult::kFinished) return;
  if (ts.torch_tid == 0) ts.torch_tid = ProfilerSession::current_torch_thread_id();
  if (ts.window != &w) w.thread_attached();
  if (ts.last_window != &w) {
    ts.last_window = &w;
    w.add_participant(&ts);
  }
  if (r == AttachResult::kAttached) {
    ts.records_for(&w).markers.push_back({true, ts.trace_tid(), time_ns, reason});
    ProfilerSession::charge(1);
  }
  ts.window = &w;
  // Regions already open (the gate opened inside them) collect from now on.
  for (OpenRegion& f : ts.frames) {
    if (f.window != nullptr) continue;
    f.window = &w;
    if (f.begin_ns < time_ns) {
      f.begin_ns = time_ns;
      f.clipped_begin = true;
    }
  }
}

void TorchProfilerSink::add_open_step_locked(CollectionWindow& w, std::int64_t end_ns,
                                             bool open_at_end) {
  if (!open_step_.open) return;
  StepSpan s;
  s.step = open_step_.step;
  s.thread = open_step_.thread;
  s.clipped_begin = open_step_.begin_ns < w.started_ns();
  s.start_ns = s.clipped_begin ? w.started_ns() : open_step_.begin_ns;
  // Back to back steps are written 1 ns apart: a viewer adding ts and dur in
  // doubles must not see one end after the next begins.
  s.end_ns = std::max(s.start_ns, open_at_end ? end_ns : end_ns - 1);
  s.open_at_end = open_at_end;
  w.add_step(s);
  ProfilerSession::charge(1);  // a trace event, like a region span
}

void TorchProfilerSink::finish_window_locked(const char* reason) {
  const bool closing = std::string_view(reason) == "close";
  CollectionWindow* w = live_.load();
  if (w == nullptr) return;
  live_.store(nullptr, std::memory_order_release);
  say_window_closed(*w, reason);
  // Only the cheap part here, on the application's thread: recording stops
  // now; libtorch's profiler is stopped and read on the writer thread, so
  // that the region or step in which this window closes does not absorb
  // those tens of milliseconds in any sink's times.
  std::string failure;
  try {
    w->session().stop_recording();
  } catch (const std::exception& e) {
    failure = e.what();
  }
  // Read after recording stopped: another thread's op that ended while it
  // was stopping is in the trace, and a region still open ends after it.
  // At close, what is open ends where the run ended for every sink.
  const std::int64_t run_end = closing ? ctx_.end_of_run_ns() : 0;
  const std::int64_t now = run_end != 0 ? run_end : steady_now();
  ops_refused_ = w->session().ops_refused();
  add_open_step_locked(*w, now, true);  // it goes on in the next window, if any
  CollectionWindow::Records rec = w->take_records();
  // Warmup windows run the profiler for nothing but its start-up cost; a
  // window no thread collected in (the application's own profiler had every
  // thread) has nothing to show.
  const bool write = w->phase() != StepPhase::kWarmup && !rec.participants.empty();
  std::vector<RegionSpan> spans;
  std::vector<CollectionMarker> markers;
  take_thread_records_locked(*w, now, reason, &spans, &markers);
  if (!failure.empty()) {
    ctx_.error(failure + "; the trace of this window is lost");
    return;
  }
  const std::int64_t cut = w->session().exhausted_at_ns();
  if (cut != 0) {
    // Reached between two boundaries: collection stopped for good then.
    stopped_ = true;
    collecting_.store(false);
    place_cap_markers(cut, &markers);
  }
  std::shared_ptr<ExportRequest> req;
  if (write) {
    const bool capped = cut != 0 || std::string_view(reason) == "size_cap";
    req = export_request(*w, std::move(rec), std::move(spans), std::move(markers), capped);
  }
  post_export(&w->session(), std::move(req));
}

void TorchProfilerSink::say_window_closed(const CollectionWindow& w, const char* reason) {
  std::size_t number = 0;
  for (std::size_t i = 0; i < windows_.size(); ++i) {
    if (windows_[i].get() == &w) number = i + 1;
  }
  const std::string_view why(reason);
  const char* words = why == "step"       ? "its steps ended"
                      : why == "close"    ? "at shutdown"
                      : why == "region"   ? "its last region ended"
                      : why == "size_cap" ? "its event or size budget was reached"
                                          : reason;
  char ms[32];
  std::snprintf(ms, sizeof(ms), "%.1f", sdk::units::to_ms(steady_now() - w.started_ns()));
  ctx_.info("collection window " + std::to_string(number) + " closed (" + words + ") after " + ms +
            " ms" + (w.phase() == StepPhase::kWarmup ? "" : "; writing its trace"));
}

void TorchProfilerSink::finish_idle_window(CollectionWindow* w) {
  std::lock_guard<std::mutex> control(control_);
  // Threads attach under control_ in this mode: a count of 0 seen here
  // stays 0 until the window is finished.
  if (live_.load() != w || w->threads_attached() != 0) return;
  finish_window_locked("region");
  // The next selected region then finds the profiler started.
  if (!stopped_ && !closed_ && gate_.collecting()) prestart_next_locked();
}

void TorchProfilerSink::prestart_next_locked() {
  prestart_->begin([this](std::function<void()> job) {
    if (!stopper_.push(ExportJob(job))) job();
  });
}

void TorchProfilerSink::take_thread_records_locked(CollectionWindow& w, std::int64_t now,
                                                   const char* reason,
                                                   std::vector<RegionSpan>* spans,
                                                   std::vector<CollectionMarker>* markers) {
  for (ThreadState* t : threads_.all()) {
    ThreadState& ts = *t;
    std::lock_guard<std::mutex> lock(ts.mutex);
    if (ts.records_window == &w) {
      std::move(ts.spans.begin(), ts.spans.end(), std::back_inserter(*spans));
      std::move(ts.markers.begin(), ts.markers.end(), std::back_inserter(*markers));
      ts.records_for(nullptr);
    }
    for (OpenRegion& f : ts.frames) {
      if (f.window != &w) continue;
      OpenRegion copy = f;
      RegionSpan s = span_of(copy, ts.trace_tid(), now);
      s.open_at_end = true;
      spans->push_back(std::move(s));
      f.window = nullptr;
    }
    if (ts.window == &w) {
      // Still attached: it detaches at its last region's end, recording nothing more.
      markers->push_back({false, ts.trace_tid(), now, reason});
      ts.window = nullptr;
    }
  }
}

std::shared_ptr<ExportRequest> TorchProfilerSink::export_request(
    CollectionWindow& w, CollectionWindow::Records rec, std::vector<RegionSpan> spans,
    std::vector<CollectionMarker> markers, bool capped) {
  auto req = std::make_shared<ExportRequest>();
  TraceData& d = req->data;
  d.rank = ctx_.rank();
  d.local_rank = ctx_.local_rank();
  d.world_size = ctx_.world_size();
  d.pid = ctx_.pid();
  d.realtime_minus_monotonic_ns = w.realtime_offset_ns();
  d.clock_start = clock_start_;
  d.prefix = settings_.prefix;
  {
    std::lock_guard<std::mutex> lock(names_mutex_);
    d.region_names = region_names_;
  }
  d.record_shapes = settings_.profiler.record_shapes;
  d.shapes_for_flops = settings_.shapes_for_flops;
  d.profile_memory = settings_.profiler.profile_memory;
  d.with_stack = settings_.profiler.with_stack;
  d.with_flops = settings_.profiler.with_flops;
  d.has_steps = rec.has_steps;
  d.first_step = rec.first_step;
  d.last_step = rec.last_step;
  d.torch_version = ProfilerSession::torch_version();
  if (settings_.profiler.cuda) d.devices = read_device_properties();
  d.ops_refused = ops_refused_;
  if (capped) d.cap_reason = settings_.max_events > 0 ? "max_events" : "max_trace_mb";
  // The window's clock to the trace's: every time in it, once.
  for (RegionSpan& s : spans) {
    s.start_ns = w.to_epoch(s.start_ns);
    s.end_ns = w.to_epoch(s.end_ns);
  }
  for (CollectionMarker& m : markers) m.time_ns = w.to_epoch(m.time_ns);
  for (StepSpan& s : rec.steps) {
    s.start_ns = w.to_epoch(s.start_ns);
    s.end_ns = w.to_epoch(s.end_ns);
  }
  d.steps = std::move(rec.steps);
  d.spans = std::move(spans);
  d.markers = std::move(markers);
  for (const ThreadState* t : rec.participants) {
    d.threads.push_back({t->trace_tid(), t->name});
    if (t->torch_tid != 0) req->trace_tids[t->torch_tid] = t->trace_tid();
  }
  req->path_base = next_path_base(rec);
  return req;
}

void TorchProfilerSink::post_export(ProfilerSession* session, std::shared_ptr<ExportRequest> req) {
  ExportOptions options;
  options.gzip = settings_.gzip;
  options.limits.max_events = settings_.max_events;
  options.limits.max_bytes = settings_.max_trace_bytes();
  options.keep_last = settings_.keep_last;
  options.output_dir = ctx_.output_dir();
  options.rank = ctx_.rank();
  options.pid = ctx_.pid();
  options.layout = settings_.layout;
  if (req != nullptr) traces_posted_.fetch_add(1);
  // The session outlives the jobs: windows are kept until the sink is
  // destroyed, after close() ran every job.
  ExportJob stop = [this, session, req, options] {
    CollectedProfilePtr profile;
    try {
      profile = session->collect();
    } catch (const std::exception& e) {
      ctx_.error(std::string(e.what()) + "; the trace of this window is lost");
      return;
    }
    if (req == nullptr) return;  // a warmup window, or one nobody collected in
    req->profile = std::move(profile);
    ExportJob write = [this, req, options] {
      export_trace(*req, options,
                   [this](LogLevel level, const std::string& m) { ctx_.log(level, m); });
    };
    if (!writer_.push(std::move(write))) write();  // closed: on this thread
  };
  if (!stopper_.push(std::move(stop))) stop();  // closed: on this thread
}

void TorchProfilerSink::stop_if_capped() {
  CollectionWindow* w = live_.load(std::memory_order_acquire);
  if (w == nullptr || !w->session().budget_exhausted()) return;
  std::lock_guard<std::mutex> control(control_);
  if (live_.load() != w) return;
  stopped_ = true;
  collecting_.store(false);
  finish_window_locked("size_cap");
  const std::string limit = settings_.max_events > 0
                                ? "max_events=" + std::to_string(settings_.max_events)
                                : "max_trace_mb=" + std::to_string(settings_.max_trace_mb);
  ctx_.warn(limit + " reached: collection stopped for good; " + std::to_string(ops_refused_) +
            " op calls after the limit were not recorded; the trace is written whole up to there");
}

void TorchProfilerSink::place_cap_markers(std::int64_t cut_ns,
                                          std::vector<CollectionMarker>* markers) {
  // The size cap stopped every thread's collection at cut_ns, mid-region
  // most likely; the sink learns of it at the next region or step boundary.
  // Markers say what happened when it happened: a thread collecting then
  // gets its disable marker at cut_ns; switching on or off after it did
  // nothing and is not shown.
  std::map<std::uint64_t, bool> on_at_cut;  // thread -> collecting at cut_ns
  std::stable_sort(
      markers->begin(), markers->end(),
      [](const CollectionMarker& a, const CollectionMarker& b) { return a.time_ns < b.time_ns; });
  std::vector<CollectionMarker> kept;
  for (const CollectionMarker& m : *markers) {
    if (m.time_ns <= cut_ns) {
      on_at_cut[m.thread] = m.enable;
      kept.push_back(m);
    }
  }
  for (const auto& [thread, on] : on_at_cut) {
    if (on) kept.push_back({false, thread, cut_ns, "size_cap"});
  }
  *markers = std::move(kept);
}

std::string TorchProfilerSink::next_path_base(const CollectionWindow::Records& rec) {
  // Unique within the process (several windows, or init() after shutdown()).
  // Never destroyed: the first use may come after the host registered its
  // exit handler, which then calls this to write the last window.
  struct Taken {
    std::mutex mutex;
    std::set<std::string> bases;
  };
  static Taken* taken = new Taken();
  // torch_trace_rank0_pid42.<first step>.pt.trace.json.gz: TensorBoard's
  // plugin takes what precedes ".<digits>.pt.trace" as the worker and the
  // digits as its span, so a rank's windows are one worker's spans, as
  // torch.profiler's tensorboard_trace_handler names them.
  std::string stem = "torch_trace";
  std::string span;
  if (rec.has_steps && rec.first_step >= 0) {
    span = "." + std::to_string(rec.first_step);
  } else if (rec.has_steps) {
    stem += "_step" + std::to_string(rec.first_step);  // no digits-only span
  }
  std::lock_guard<std::mutex> lock(taken->mutex);
  for (int n = 0;; ++n) {
    // FastVideo's folder: tensorboard_trace_handler's "<host>_<pid>.<ns>",
    // the ns of the wall clock at export (the next one if that is taken).
    const std::string base =
        settings_.layout == Layout::kFastVideo
            ? fastvideo_trace_base(ctx_.output_dir(), ctx_.pid(), n)
            : ctx_.output_path(n == 0 ? stem : stem + "_" + std::to_string(n), "") + span;
    std::error_code ec;
    if (taken->bases.count(base) != 0 ||
        std::filesystem::exists(base + trace_extension(false), ec) ||
        std::filesystem::exists(base + trace_extension(true), ec)) {
      continue;
    }
    taken->bases.insert(base);
    return base;
  }
}

}  // namespace regiontrace::torch_profiler

REGIONTRACE_SINK_PLUGIN(regiontrace::torch_profiler::TorchProfilerSink, "torch_profiler")
