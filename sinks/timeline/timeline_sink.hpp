// The `timeline` sink: every selected region, step and mark of every thread
// as one Chrome/Perfetto trace per process, timeline_rank<r>_pid<p>.json.gz,
// without libtorch.
//
// Regions come as spans (kInterestSpans): the host records them with no
// call into the sink and hands each thread's spans over in batches (when
// its buffer fills, when the thread exits, and when the host stops, with
// the spans still open). A batch is copied as 32-byte records into the
// thread's own 64 KiB chunk, found by the host's thread number; no
// allocation, no formatting. A full chunk is traded for an empty one under
// a short lock (once per 2048 regions). Open spans are noted in the
// thread's slot by depth, so close() can write them.
// The writer thread appends full chunks to an unlinked temporary file and
// recycles them; buffer_mb bounds the chunks, max_events/max_mb what is
// kept, and what does not fit is dropped whole and counted (the counts are
// in the trace's "timeline" member and in a warning). close() (shutdown,
// exit, SIGINT/SIGTERM through the host) formats and gzips the trace into a
// temporary file renamed into place.
// Until then the file under that name is the flight recorder's
// (flight_recorder.hpp): every flush_interval_s the host's flush thread
// calls flush(), which hands the threads' chunks to the writer and formats
// what the writer kept since the last flush into it, so a killed process
// leaves a trace marked incomplete. Formatting takes at most a quarter of
// the flush thread's time: a flush that took d (10 ms or more) waits 3d
// before the next.
// A full disk loses as little as it can: chunks the temporary file cannot
// take stay in memory (buffer_mb still bounds them) and are retried, and a
// trace the disk cannot hold is written again for the first half of the
// run, a quarter..., each time with what was left out counted.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "chunk_exchange.hpp"
#include "flight_recorder.hpp"
#include "record_budget.hpp"
#include "regiontrace/plugin.hpp"
#include "regiontrace/sdk/clock.hpp"
#include "regiontrace/sdk/clock_sync.hpp"
#include "spill_file.hpp"
#include "thread_slots.hpp"
#include "timeline_settings.hpp"
#include "trace_builder.hpp"

namespace regiontrace::timeline {

class TimelineSink : public Sink {
 public:
  static SinkSchema schema() { return TimelineSettings::schema(); }
  explicit TimelineSink(const SinkContext& ctx);
  ~TimelineSink() override;

  std::uint32_t interests() const override {
    return kInterestSpans | kInterestMarks | kInterestSteps | kInterestTimestamps |
           (flight_ ? kInterestPeriodicFlush : 0u);
  }
  void on_region_routed(const RegionInfo& info) override;
  void on_spans(const SpanBatch& batch) override;
  void on_step(const StepEvent& ev) override;
  void on_mark(const MarkEvent& ev) override;
  void flush() override;
  void close() override;

  // A thread that recorded here exits: its chunk goes to the writer.
  void thread_exited(ThreadSlot* slot);
  const std::string& path() const { return path_; }

 private:
  // `exit_hook`: called on the thread itself, which hands its chunk over
  // when it exits (spans come with their own last batch instead).
  ThreadSlot* new_slot(std::uint64_t number, long os_tid, bool exit_hook);
  // Room for `bytes` in the slot's chunk, trading it when full; null: drop.
  unsigned char* room(ThreadSlot* s, std::size_t bytes) {
    if (__builtin_expect(s->chunk != nullptr && s->used + bytes <= Chunk::kBytes, 1)) {
      return s->chunk->data + s->used;
    }
    return refill(s, bytes);
  }
  unsigned char* refill(ThreadSlot* s, std::size_t bytes);
  void drop(ThreadSlot* s) {
    s->dropped.store(s->dropped.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
  void writer_loop();
  // Moves held chunks into the spill file, oldest first, until one fails.
  // One the disk has no room for stays in memory (the exchange has a chunk
  // fewer) and is tried again when the next chunk comes.
  void spill_held();

  // What was not recorded, by cause; written.cut adds what a full disk
  // left out of the trace.
  struct Losses {
    std::uint64_t buffer_full = 0;
    std::uint64_t over_cap = 0;
    std::uint64_t by_host = 0;
  };
  // Writes path_, cutting the run shorter while the disk has no room, and
  // giving back the spill file's space past each cut (on a full disk that
  // file is most of what fills it).
  // False (and `failure`) when nothing could be written.
  // `events`: how many the whole trace holds.
  bool write_trace_file(TraceInput& in, std::uint64_t events, TraceTotals& totals,
                        std::string& failure);
  void release_spill_after_cut(const TraceInput& in);
  // The earliest begin, mark or step in `in` (INT64_MAX when none).
  static std::int64_t first_event_ns(const TraceInput& in);
  // On a full disk: the spill file's pieces into memory and the file
  // closed (its space freed). False when too large or unreadable.
  bool load_spill_into_memory(TraceInput& in);
  std::string statistics(const Losses& lost, const TraceTotals& written,
                         std::int64_t cut_at_ns) const;
  void report_losses(const Losses& lost, const TraceTotals* written, const TraceInput& in,
                     std::int64_t run_end_ns, const std::string& failure) const;
  // The flight file's update: what the writer kept since the last one.
  FlightRecorder::Update flight_update();
  // The regions open on `s`, outermost first, as the host last saw them
  // open at `seen_since_ns` or later; an entry older than a shallower one is
  // left from a region whose end never came (the host switched routing
  // while it was open) and is skipped.
  static std::vector<OpenSpan> open_regions(ThreadSlot& s, std::int64_t seen_since_ns);

  SinkContext context_;
  TimelineSettings settings_;
  std::string path_;
  sdk::clock_sync::Pair start_pair_;
  SlotTable slots_;
  ChunkExchange exchange_;
  std::unique_ptr<SpillFile> spill_;
  std::vector<unsigned char> spill_in_memory_;  // load_spill_into_memory()

  // The writer thread's, under spilled_mutex_ while it runs (flush() reads
  // them); read by close() after joining it.
  struct SpilledChunk {
    std::uint64_t slot = 0;
    std::uint64_t offset = 0;
    Chunk* chunk = nullptr;  // still in memory: the spill file had no room
    std::size_t bytes = 0;
    PieceExtent extent;
  };
  std::vector<SpilledChunk> spilled_;
  // spilled_[first_held_..] are still in memory: chunks are spilled in
  // order and spilling stops at the first that does not fit.
  std::size_t first_held_ = 0;
  bool spill_failing_ = false;
  bool spill_failed_ = false;
  RecordBudget budget_;
  std::mutex spilled_mutex_;
  std::condition_variable chunk_done_;  // processed_ grew
  std::uint64_t processed_ = 0;         // chunks the writer took from the exchange

  // The flight file; null when flight_recorder is off, and once close()
  // replaces it.
  std::unique_ptr<FlightRecorder> flight_;
  std::mutex flight_mutex_;
  std::size_t flight_pieces_ = 0;  // spilled_[..flight_pieces_] are in it
  std::size_t flight_steps_ = 0;   // steps_[..flight_steps_] too
  std::int64_t flight_not_before_ns_ = 0;

  std::mutex names_mutex_;
  std::vector<std::string> names_;  // by RegionId
  std::mutex steps_mutex_;
  std::vector<StepMark> steps_;
  std::uint64_t steps_dropped_ = 0;
  // Spans the host could not record for this sink (SpanBatch::dropped).
  std::atomic<std::uint64_t> host_dropped_{0};
  const pid_t pid_;
  std::atomic<bool> closed_{false};
  std::mutex close_mutex_;
  std::thread writer_;
};

}  // namespace regiontrace::timeline
