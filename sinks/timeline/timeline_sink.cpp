#include "timeline_sink.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <system_error>

#include "regiontrace/sdk/json_writer.hpp"
#include "regiontrace/sdk/trace_time.hpp"

namespace regiontrace::timeline {
namespace {

// The trace is written at exit, where time matters more than the last 20%
// of size.
constexpr int kGzipLevel = 1;
constexpr std::size_t kMaxMarkText = 4096;  // name and path each; a record fits a chunk

// Hands each recording thread's chunk to its sinks when the thread exits,
// so a finished thread's last records are written and its chunk recycled.
// Touched only when a thread records for the first time.
struct ExitHooks {
  std::vector<std::pair<TimelineSink*, ThreadSlot*>> entries;
  ~ExitHooks() {
    for (auto& [sink, slot] : entries) sink->thread_exited(slot);
  }
};
thread_local ExitHooks t_exit_hooks;

}  // namespace

TimelineSink::TimelineSink(const SinkContext& ctx)
    : context_(ctx),
      settings_(TimelineSettings::from(ctx)),
      path_(ctx.output_path("timeline", "json.gz")),
      start_pair_(sdk::clock_sync::read()),
      exchange_(static_cast<std::size_t>(settings_.buffer_bytes / Chunk::kBytes)),
      spill_(std::make_unique<SpillFile>(ctx.output_dir())),
      budget_(settings_.max_events, settings_.max_bytes),
      pid_(::getpid()) {
  if (settings_.flight_recorder) {
    try {
      flight_ = std::make_unique<FlightRecorder>(path_, context_, settings_.span_prefix,
                                                 start_pair_.monotonic_ns, start_pair_);
    } catch (const std::exception& e) {
      // No half-written file under the trace's name; the trace is still
      // tried at shutdown, which says what it could not write.
      ::unlink(path_.c_str());
      context_.warn(std::string("no flight recording: ") + e.what() + "; " + path_ +
                    " is written at shutdown only");
    }
  }
  writer_ = std::thread([this] { writer_loop(); });
}

TimelineSink::~TimelineSink() {
  close();
}

void TimelineSink::on_region_routed(const RegionInfo& info) {
  std::lock_guard<std::mutex> lock(names_mutex_);
  if (names_.size() <= info.id) names_.resize(info.id + 1);
  names_[info.id] = std::string(info.name);
}

ThreadSlot* TimelineSink::new_slot(std::uint64_t number, long os_tid, bool exit_hook) {
  if (number == 0) return nullptr;  // no thread stack: not a recording thread
  ThreadSlot* s = slots_.create(number, os_tid);
  if (s != nullptr && exit_hook) t_exit_hooks.entries.emplace_back(this, s);
  return s;
}

void TimelineSink::on_spans(const SpanBatch& batch) {
  if (batch.dropped != 0) host_dropped_.fetch_add(batch.dropped, std::memory_order_relaxed);
  ThreadSlot* s = slots_.find(batch.thread_id);
  if (s == nullptr) s = new_slot(batch.thread_id, batch.os_tid, false);
  if (s == nullptr) return;
  // Finished spans come first; open ones only at the end of the stop's
  // batch.
  std::size_t closed = batch.count;
  while (closed > 0 && batch.spans[closed - 1].open != 0) --closed;
  {
    SlotLock lock(*s);
    if (s->has_open) {
      // A region a flush saw open has ended: it is a finished span now.
      for (std::size_t i = 0; i < closed; ++i) {
        const Span& span = batch.spans[i];
        if (span.depth < ThreadSlot::kMaxDepth &&
            s->open[span.depth].begin_ns.load(std::memory_order_relaxed) == span.begin_ns) {
          s->open[span.depth].begin_ns.store(0, std::memory_order_relaxed);
        }
      }
    }
    // Whole runs of records, as many as the chunk holds, then a new chunk.
    std::size_t done = 0;
    while (done < closed) {
      if (room(s, sizeof(RegionRecord)) == nullptr) {
        for (; done < closed; ++done) drop(s);
        break;
      }
      const std::size_t fit = std::min(closed - done, (Chunk::kBytes - s->used) / sizeof(Span));
      std::memcpy(s->chunk->data + s->used, batch.spans + done, fit * sizeof(Span));
      done += fit;
      s->used += static_cast<std::uint32_t>(fit * sizeof(Span));
      s->chunk->used.store(s->used, std::memory_order_release);
    }
    for (std::size_t i = closed; i < batch.count; ++i) {
      // Written by close() with the trace's end as its end.
      const Span& span = batch.spans[i];
      if (span.depth >= ThreadSlot::kMaxDepth) continue;
      OpenRegion& o = s->open[span.depth];
      o.region.store(span.id, std::memory_order_relaxed);
      o.step.store(span.step, std::memory_order_relaxed);
      o.seen_ns.store(span.end_ns, std::memory_order_relaxed);
      o.begin_ns.store(span.begin_ns, std::memory_order_release);
      s->has_open = true;
    }
  }
  if (batch.last != 0) thread_exited(s);
}

void TimelineSink::on_mark(const MarkEvent& ev) {
  ThreadSlot* s = slots_.find(ev.thread_id);
  // On the thread itself: its tid costs a system call, made once.
  if (s == nullptr) s = new_slot(ev.thread_id, static_cast<long>(::syscall(SYS_gettid)), true);
  if (s == nullptr) return;
  SlotLock lock(*s);
  const std::size_t name = std::min(ev.name.size(), kMaxMarkText);
  const std::size_t path = std::min(ev.path.size(), kMaxMarkText);
  const std::size_t size = (sizeof(MarkRecord) + name + path + 7) & ~std::size_t{7};
  unsigned char* p = room(s, size);
  if (p == nullptr) {
    drop(s);
    return;
  }
  MarkRecord m;
  m.size = static_cast<std::uint32_t>(size);
  m.time_ns = ev.time_ns;
  m.step = ev.step;
  m.name_length = static_cast<std::uint32_t>(name);
  m.path_length = static_cast<std::uint32_t>(path);
  std::memcpy(p, &m, sizeof(m));
  // An empty view may hold a null pointer, which memcpy must not get.
  if (name > 0) std::memcpy(p + sizeof(m), ev.name.data(), name);
  if (path > 0) std::memcpy(p + sizeof(m) + name, ev.path.data(), path);
  s->used += static_cast<std::uint32_t>(size);
  s->chunk->used.store(s->used, std::memory_order_release);
}

void TimelineSink::on_step(const StepEvent& ev) {
  const long tid = static_cast<long>(::syscall(SYS_gettid));
  std::lock_guard<std::mutex> lock(steps_mutex_);
  if (closed_.load(std::memory_order_relaxed)) return;
  if (steps_.size() >= settings_.max_events) {
    ++steps_dropped_;
    return;
  }
  steps_.push_back({ev.time_ns, ev.step, tid});
}

unsigned char* TimelineSink::refill(ThreadSlot* s, std::size_t bytes) {
  if (bytes > Chunk::kBytes) return nullptr;
  if (s->chunk == nullptr && exchange_.exhausted()) return nullptr;
  if (!exchange_.trade(s->chunk, s->index) || s->chunk == nullptr) return nullptr;
  s->used = s->chunk->used.load(std::memory_order_relaxed);
  if (s->used + bytes > Chunk::kBytes) return nullptr;
  return s->chunk->data + s->used;
}

void TimelineSink::thread_exited(ThreadSlot* slot) {
  // A forked child's threads exit too: its parent's sink is not its own (and
  // a lock the parent held at fork() stays held).
  if (::getpid() != pid_) return;
  SlotLock lock(*slot);
  exchange_.hand_over(slot->chunk);
  slot->used = 0;
}

void TimelineSink::writer_loop() {
  while (Chunk* c = exchange_.next_full()) {
    {
      std::lock_guard<std::mutex> lock(spilled_mutex_);
      const std::size_t used = c->used.load(std::memory_order_acquire);
      const std::size_t keep = budget_.keep(c->data, used);
      budget_.drop_rest(c->data, keep, used);
      if (keep == 0) {
        exchange_.give_back(c);
      } else {
        spilled_.push_back({c->slot, 0, c, keep, extent_of(c->data, keep)});
        spill_held();
      }
      ++processed_;
    }
    chunk_done_.notify_all();
  }
}

void TimelineSink::spill_held() {
  for (; first_held_ < spilled_.size(); ++first_held_) {
    SpilledChunk& piece = spilled_[first_held_];
    try {
      piece.offset = spill_->append(piece.chunk->data, piece.bytes);
    } catch (const std::exception& e) {
      if (!spill_failing_) {
        spill_failing_ = true;
        spill_failed_ = true;
        context_.warn(
            std::string(e.what()) + "; the timeline keeps its events in memory (up to buffer_mb, " +
            std::to_string(settings_.buffer_bytes >> 20) + ") and tries again as more come");
      }
      return;
    }
    if (spill_failing_) {
      spill_failing_ = false;
      context_.info("the timeline's temporary file in `" + context_.output_dir() +
                    "` takes events again");
    }
    exchange_.give_back(piece.chunk);
    piece.chunk = nullptr;
  }
}

std::vector<OpenSpan> TimelineSink::open_regions(ThreadSlot& s, std::int64_t seen_since_ns) {
  std::vector<OpenSpan> open;
  std::int64_t newest = 0;
  for (int d = 0; d < ThreadSlot::kMaxDepth; ++d) {
    const std::int64_t begin = s.open[d].begin_ns.load(std::memory_order_acquire);
    if (begin == 0 || begin < newest) continue;
    if (s.open[d].seen_ns.load(std::memory_order_relaxed) < seen_since_ns) continue;
    newest = begin;
    open.push_back({d, s.open[d].region.load(std::memory_order_relaxed), begin,
                    s.open[d].step.load(std::memory_order_relaxed)});
  }
  return open;
}

void TimelineSink::flush() {
  // The host flushes every sink right before it closes them: the trace
  // written at close replaces this file anyway.
  if (closed_.load() || context_.stop_ns() != 0) return;
  std::lock_guard<std::mutex> flight_lock(flight_mutex_);
  const std::int64_t started = sdk::clock::now_ns();
  if (!flight_ || closed_.load() || started < flight_not_before_ns_) return;
  try {
    FlightRecorder::Update update = flight_update();
    std::vector<std::string> names;
    {
      std::lock_guard<std::mutex> lock(names_mutex_);
      names = names_;
    }
    update.region_names = &names;
    if (!flight_->commit(update)) return;  // the process stops
  } catch (const std::exception& e) {
    // The file keeps its last whole document; the trace at close is
    // written as before.
    context_.warn(std::string("the timeline's flight recording stops: ") + e.what() + "; " + path_ +
                  " is written at shutdown only");
    flight_->remove();
    flight_.reset();
    return;
  }
  // A long one (a run recording millions of regions a second) waits three
  // times as long before the next: the flush thread formats at most a
  // quarter of the time. Short ones, and an application's own flush(),
  // are never held back.
  constexpr std::int64_t kLongFlushNs = 10'000'000;
  const std::int64_t took = sdk::clock::now_ns() - started;
  flight_not_before_ns_ = took >= kLongFlushNs ? started + 4 * took : 0;
}

FlightRecorder::Update TimelineSink::flight_update() {
  // What threads still hold in their chunks goes to the writer first.
  const std::vector<ThreadSlot*> slots = slots_.all();
  for (ThreadSlot* s : slots) {
    SlotLock lock(*s);
    if (s->chunk == nullptr) continue;
    exchange_.hand_over(s->chunk);
    if (s->chunk == nullptr) s->used = 0;
  }
  const std::uint64_t handed = exchange_.queued_total();
  FlightRecorder::Update update;
  update.threads.resize(slots.size());
  Losses lost;
  std::uint64_t kept = 0;
  {
    std::unique_lock<std::mutex> lock(spilled_mutex_);
    // Bounded: a writer stuck on a slow disk only delays what this flush has.
    chunk_done_.wait_for(lock, std::chrono::seconds(5), [&] { return processed_ >= handed; });
    for (; flight_pieces_ < spilled_.size(); ++flight_pieces_) {
      const SpilledChunk& c = spilled_[flight_pieces_];
      if (c.slot >= update.threads.size()) update.threads.resize(c.slot + 1);
      FlightRecorder::Piece piece;
      piece.spill_offset = c.offset;
      piece.bytes = c.bytes;
      // Still in memory (the disk had no room): copied, as the writer may
      // give the chunk back once it is spilled.
      if (c.chunk != nullptr) piece.memory.assign(c.chunk->data, c.chunk->data + c.bytes);
      update.threads[c.slot].pieces.push_back(std::move(piece));
    }
    kept = budget_.kept();
    lost.over_cap = budget_.dropped();
  }
  update.read = [this](const FlightRecorder::Piece& p, std::vector<unsigned char>& out) {
    out.resize(p.bytes);
    spill_->read(p.spill_offset, out.data(), p.bytes);
  };
  // The process stops: the trace written at close replaces the file, and
  // formatting on must not hold up the exit.
  update.give_up = [this] { return context_.stop_ns() != 0 || closed_.load(); };
  // Again: a thread may have recorded for the first time meanwhile.
  for (ThreadSlot* s : slots_.all()) {
    if (s->index >= update.threads.size()) update.threads.resize(s->index + 1);
    FlightRecorder::Thread& t = update.threads[s->index];
    t.os_tid = s->os_tid;
    t.name = s->name;
    t.open = open_regions(*s, 0);
    lost.buffer_full += s->dropped.load(std::memory_order_relaxed);
  }
  std::uint64_t steps = 0;
  {
    std::lock_guard<std::mutex> lock(steps_mutex_);
    update.new_steps.assign(steps_.begin() + static_cast<std::ptrdiff_t>(flight_steps_),
                            steps_.end());
    flight_steps_ = steps_.size();
    steps = steps_.size();
    lost.over_cap += steps_dropped_;
  }
  std::stable_sort(update.new_steps.begin(), update.new_steps.end(),
                   [](const StepMark& a, const StepMark& b) { return a.time_ns < b.time_ns; });
  lost.by_host = host_dropped_.load(std::memory_order_relaxed);
  update.now_ns = sdk::clock::now_ns();
  json::Writer w(update.statistics);
  w.begin_object()
      .field("recorded", static_cast<std::int64_t>(kept + steps))
      .field("dropped", static_cast<std::int64_t>(lost.buffer_full + lost.over_cap + lost.by_host))
      .field("dropped_by_host", static_cast<std::int64_t>(lost.by_host))
      .field("dropped_buffer_full", static_cast<std::int64_t>(lost.buffer_full))
      .field("dropped_over_cap", static_cast<std::int64_t>(lost.over_cap))
      .field("buffer_mb", static_cast<std::int64_t>(settings_.buffer_bytes >> 20))
      .field("max_events", static_cast<std::int64_t>(settings_.max_events))
      .field("max_mb", static_cast<std::int64_t>(settings_.max_bytes >> 20))
      .end_object();
  return update;
}

void TimelineSink::report_losses(const Losses& lost, const TraceTotals* written,
                                 const TraceInput& in, std::int64_t run_end_ns,
                                 const std::string& failure) const {
  const std::uint64_t events = budget_.kept() + in.steps.size();
  // Every count below is also in the trace's "timeline" member, when there
  // is a trace to point at.
  const std::string see = written != nullptr ? "; see " + path_ + " (\"timeline\" member)" : "";
  if (written == nullptr) {
    context_.error("cannot write the timeline (" + failure + "): its " + std::to_string(events) +
                   " events are lost");
  } else if (in.cut) {
    const double kept_s = sdk::units::to_seconds(in.end_ns - in.base_ns);
    const double run_s = sdk::units::to_seconds(run_end_ns - in.base_ns);
    char span[96];
    std::snprintf(span, sizeof(span), "the first %.3f s of the run's %.3f s", kept_s, run_s);
    context_.warn("the disk could not hold the whole timeline (" + failure + "): " + path_ +
                  " has " + span + "; " + std::to_string(written->cut) + " of " +
                  std::to_string(events) + " events after that are not in it (dropped_disk_full)");
  }
  if (lost.by_host > 0) {
    context_.warn(std::to_string(lost.by_host) +
                  " region spans were not recorded by the host (regions opened from a sink's "
                  "own span callback, or re-opened while no sink ran)" +
                  see);
  }
  if (lost.buffer_full > 0) {
    context_.warn(std::to_string(lost.buffer_full) +
                  " events were dropped because no buffer was free (buffer_mb is " +
                  std::to_string(settings_.buffer_bytes >> 20) +
                  (spill_failed_ ? "; the disk was full, so events stayed in memory"
                                 : "; the writer fell behind: raise it") +
                  ")" + see);
  }
  if (lost.over_cap > 0) {
    context_.warn(std::to_string(lost.over_cap) + " events were dropped past max_events (" +
                  std::to_string(settings_.max_events) + ") or max_mb (" +
                  std::to_string(settings_.max_bytes >> 20) + ")" + see);
  }
}

std::string TimelineSink::statistics(const Losses& lost, const TraceTotals& written,
                                     std::int64_t cut_at_ns) const {
  const std::uint64_t disk_full = written.cut;
  std::string out;
  json::Writer w(out);
  w.begin_object()
      .field("recorded", static_cast<std::int64_t>(budget_.kept() + steps_.size() - disk_full))
      .field("dropped",
             static_cast<std::int64_t>(lost.buffer_full + lost.over_cap + lost.by_host + disk_full))
      .field("dropped_by_host", static_cast<std::int64_t>(lost.by_host))
      .field("dropped_buffer_full", static_cast<std::int64_t>(lost.buffer_full))
      .field("dropped_over_cap", static_cast<std::int64_t>(lost.over_cap))
      .field("dropped_disk_full", static_cast<std::int64_t>(disk_full));
  if (cut_at_ns != 0) w.field("written_until_ns", cut_at_ns);
  w.field("buffer_mb", static_cast<std::int64_t>(settings_.buffer_bytes >> 20))
      .field("max_events", static_cast<std::int64_t>(settings_.max_events))
      .field("max_mb", static_cast<std::int64_t>(settings_.max_bytes >> 20))
      .end_object();
  return out;
}

bool TimelineSink::write_trace_file(TraceInput& in, std::uint64_t events, TraceTotals& totals,
                                    std::string& failure) {
  // A full disk: the first part of the run, as much as the failed write
  // reached (taking events as even in time) but at least half, then half of
  // that, a quarter... and at last the header alone, which says what was
  // lost. Each cut gives the spill file's space past it back first.
  constexpr int kAttempts = 10;
  for (int attempt = 1;; ++attempt) {
    try {
      sdk::BackgroundGzipWriter file(path_, kGzipLevel);
      write_trace(in, file, totals);
      file.commit();
      return true;
    } catch (const std::system_error& e) {
      failure = e.what();
      const int code = e.code().value();
      const bool no_room = code == ENOSPC || code == EDQUOT || code == EFBIG;
      if (!no_room || attempt == kAttempts) return false;
    } catch (const std::exception& e) {
      failure = e.what();
      return false;
    }
    if (flight_) {
      // The file the trace replaces holds the same events: its room first,
      // and the whole run again, not counted as an attempt.
      flight_->remove();
      flight_.reset();
      --attempt;
      continue;
    }
    if (!in.cut && load_spill_into_memory(in)) continue;  // the whole run again, spill gone
    double keep = 0.5;
    if (!in.cut && events > 0) {
      // The failed write says how much fitted beside the spill file; the
      // space that file gives back past the cut makes room for more.
      const double got = static_cast<double>(totals.regions + totals.marks + totals.steps);
      keep = std::clamp(0.9 * got / static_cast<double>(events), 0.5, 0.9);
    }
    if (attempt + 1 == kAttempts) keep = 0;
    in.cut = true;
    // A share of the time that holds events: the start-up before the first
    // one (sinks built, files made) holds none, and halving across it would
    // cut every event at once in a short run.
    const std::int64_t first = std::min(in.end_ns, std::max(in.base_ns, first_event_ns(in)));
    in.end_ns = first + static_cast<std::int64_t>(static_cast<double>(in.end_ns - first) * keep);
    release_spill_after_cut(in);
  }
}

std::int64_t TimelineSink::first_event_ns(const TraceInput& in) {
  std::int64_t first = INT64_MAX;
  for (const ThreadRecords& t : in.threads) {
    for (const ThreadRecords::Piece& p : t.pieces) first = std::min(first, p.extent.earliest_ns);
    for (const OpenSpan& o : t.open) first = std::min(first, o.begin_ns);
  }
  for (const StepMark& s : in.steps) first = std::min(first, s.time_ns);
  return first;
}

bool TimelineSink::load_spill_into_memory(TraceInput& in) {
  // The spill file is what fills a full disk, and the trace is about a
  // quarter of its size: read back into memory (bounded), it frees room for
  // the whole trace.
  constexpr std::uint64_t kMaxInMemory = std::uint64_t{256} << 20;
  if (spill_ == nullptr || spill_->size() == 0 || spill_->size() > kMaxInMemory) return false;
  try {
    spill_in_memory_.resize(spill_->size());
    for (ThreadRecords& t : in.threads) {
      for (ThreadRecords::Piece& p : t.pieces) {
        if (p.memory != nullptr) continue;
        spill_->read(p.spill_offset, spill_in_memory_.data() + p.spill_offset, p.bytes);
        p.memory = spill_in_memory_.data() + p.spill_offset;
      }
    }
  } catch (const std::exception& e) {
    context_.warn(std::string("cannot read the timeline's temporary file back: ") + e.what());
    return false;
  }
  spill_.reset();
  in.spill = nullptr;
  return true;
}

void TimelineSink::release_spill_after_cut(const TraceInput& in) {
  if (spill_ == nullptr) return;
  for (const ThreadRecords& t : in.threads) {
    for (const ThreadRecords::Piece& p : t.pieces) {
      if (p.memory == nullptr && p.extent.earliest_ns > in.end_ns) {
        spill_->release(p.spill_offset, p.bytes);
      }
    }
  }
}

void TimelineSink::close() {
  std::lock_guard<std::mutex> close_lock(close_mutex_);
  if (closed_.exchange(true)) return;
  // A flush under way ends first; none starts after.
  std::lock_guard<std::mutex> flight_lock(flight_mutex_);
  exchange_.close();
  if (writer_.joinable()) writer_.join();
  // What is still open ends when the host began closing sinks: another
  // sink's close (a trace export) before this one is not the program's time.
  std::int64_t end_ns = context_.end_of_run_ns();
  if (end_ns == 0) end_ns = sdk::clock::now_ns();

  TraceInput in;
  in.context = &context_;
  in.span_prefix = settings_.span_prefix;
  in.base_ns = start_pair_.monotonic_ns;
  in.end_ns = end_ns;
  in.start_pair = start_pair_;
  in.spill = spill_.get();
  {
    std::lock_guard<std::mutex> lock(names_mutex_);
    in.region_names = names_;
  }
  const std::vector<ThreadSlot*> slots = slots_.all();
  in.threads.resize(slots.size());
  for (const SpilledChunk& c : spilled_) {
    // A chunk the disk had no room for is still in memory.
    in.threads[c.slot].pieces.push_back(
        {c.offset, c.chunk != nullptr ? c.chunk->data : nullptr, c.bytes, c.extent});
  }
  std::uint64_t buffer_full = 0;
  for (ThreadSlot* s : slots) {
    ThreadRecords& t = in.threads[s->index];
    t.os_tid = s->os_tid;
    t.name = s->name;
    buffer_full += s->dropped.load(std::memory_order_relaxed);
    // The exchange is closed: no thread changes its chunk any more, and
    // `used` counts whole records only.
    SlotLock lock(*s);
    if (s->chunk != nullptr) {
      const std::size_t used = s->chunk->used.load(std::memory_order_acquire);
      const std::size_t keep = budget_.keep(s->chunk->data, used);
      budget_.drop_rest(s->chunk->data, keep, used);
      if (keep > 0) {
        t.pieces.push_back({0, s->chunk->data, keep, extent_of(s->chunk->data, keep)});
      }
    }
    t.open = open_regions(*s, context_.stop_ns());
  }
  {
    std::lock_guard<std::mutex> lock(steps_mutex_);
    // max_events counts steps too: the latest ones past it are dropped.
    const std::uint64_t room =
        settings_.max_events > budget_.kept() ? settings_.max_events - budget_.kept() : 0;
    if (steps_.size() > room) {
      steps_dropped_ += steps_.size() - room;
      steps_.resize(room);
    }
    in.steps = steps_;
  }
  Losses lost;
  lost.buffer_full = buffer_full;
  lost.over_cap = budget_.dropped() + steps_dropped_;
  lost.by_host = host_dropped_.load(std::memory_order_relaxed);
  in.end_pair = sdk::clock_sync::read();
  in.statistics = [&](const TraceTotals& written) {
    return statistics(lost, written, in.cut ? in.end_ns : 0);
  };
  TraceTotals totals;
  std::string failure;
  const bool written = write_trace_file(in, budget_.kept() + in.steps.size(), totals, failure);
  // Replaced by the trace; or, when none could be written, what a reader
  // finds under its name, marked incomplete.
  flight_.reset();
  if (written) {
    context_.info("wrote " + path_ + " (" + std::to_string(totals.regions) + " region spans, " +
                  std::to_string(totals.open_at_end) + " open at the end, " +
                  std::to_string(totals.marks) + " marks, " + std::to_string(totals.steps) +
                  " steps)");
  }
  // The sink outlives close() (late callbacks may come, and the host never
  // deletes a sink): give back the temporary file's disk and every chunk,
  // so that init()/shutdown() cycles do not keep a chunk per thread each.
  // A slot's chunk is only touched under its lock, and a closed exchange
  // hands out none: a late callback finds no chunk and drops.
  spill_.reset();
  spill_in_memory_ = {};
  for (ThreadSlot* s : slots) {
    SlotLock lock(*s);
    s->chunk = nullptr;
    s->used = 0;
  }
  exchange_.release_all();
  report_losses(lost, written ? &totals : nullptr, in, end_ns, failure);
}

}  // namespace regiontrace::timeline

REGIONTRACE_SINK_PLUGIN(regiontrace::timeline::TimelineSink, "timeline")
