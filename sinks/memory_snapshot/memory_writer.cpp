#include "memory_writer.hpp"

#include <chrono>
#include <cstdio>
#include <stdexcept>

#include "memory_record_json.hpp"
#include "regiontrace/sdk/whole_file_writer.hpp"
#include "snapshot_format.hpp"

namespace regiontrace::memory {
namespace {

std::string base_name(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string snapshot_stem(int sequence) {
  char buf[48];
  std::snprintf(buf, sizeof(buf), "memory_snapshot_%04d", sequence);
  return buf;
}

sdk::BoundedQueueWriter<WriterItem>::Options queue_options(const MemorySettings& settings) {
  sdk::BoundedQueueWriter<WriterItem>::Options o;
  o.capacity = static_cast<std::size_t>(settings.queue_capacity);
  o.on_full = sdk::OnFull::kDrop;  // an allocation never waits for the disk
  // The writer wakes at least this often; a push wakes it early only when the
  // queue holds a batch (one notify per batch, not per record), which keeps
  // the queue small and in cache. At most the 1024 items the queue reserves:
  // a batch that fills the reserved vector never makes a producer grow it
  // (a reallocation that moves every queued record) while the writer wakes.
  o.idle_wakeup = std::chrono::milliseconds(50);
  o.wake_batch = std::max<std::size_t>(1, std::min<std::size_t>(o.capacity / 2, 1024));
  return o;
}

}  // namespace

MemoryWriter::MemoryWriter(const SinkContext& ctx, const MemorySettings& settings,
                           const RegionPaths& paths)
    : ctx_(ctx),
      settings_(settings),
      paths_(paths),
      jsonl_(std::make_unique<sdk::LineFileWriter>(ctx.output_path("memory", "jsonl"))),
      trace_(std::make_unique<ChromeTraceFile>()),
      queue_(
          queue_options(settings), [this](std::vector<WriterItem>& batch) { write_batch(batch); },
          [this] { sync(); }) {
  if (settings.trace) trace_->open(ctx.output_path("memory_trace", "json"), ctx);
}

MemoryWriter::~MemoryWriter() {
  // Sinks are never deleted by the host; this is for tests and safety.
  queue_.close();
}

bool MemoryWriter::push(RegionRecord&& record) {
  return queue_.push(WriterItem(std::move(record)));
}

void MemoryWriter::push(std::unique_ptr<SnapshotJob> job) {
  queue_.push_beyond_capacity(WriterItem(std::move(job)));
}

void MemoryWriter::write_batch(std::vector<WriterItem>& batch) {
  for (WriterItem& item : batch) {
    if (auto* r = std::get_if<RegionRecord>(&item)) {
      write_record(*r);
    } else if (const auto& job = std::get<std::unique_ptr<SnapshotJob>>(item)) {
      write_snapshot(*job);
    }  // else: a release marker (close())
  }
  if (releasing_.load(std::memory_order_relaxed)) {
    // Closing: free this batch's storage, and queue a marker so that the
    // next round has a batch too (and frees it); see close().
    std::vector<WriterItem>().swap(batch);
    if (!queue_.push_beyond_capacity(WriterItem(std::unique_ptr<SnapshotJob>()))) {
      markers_refused_.fetch_add(1, std::memory_order_relaxed);
    }
  }
  throw_if_files_failed();
}

void MemoryWriter::sync() {
  jsonl_->flush();
  trace_->flush();
  throw_if_files_failed();
}

void MemoryWriter::throw_if_files_failed() const {
  if (jsonl_->failed()) throw std::runtime_error(jsonl_->error());
  if (trace_->file().failed()) throw std::runtime_error(trace_->file().error());
}

void MemoryWriter::write_record(const RegionRecord& r) {
  line_.clear();
  append_region_record(line_, r, paths_);
  jsonl_->append(line_);
  trace_->add_region(r, paths_);
  summary_.add(r);
}

void MemoryWriter::write_snapshot(SnapshotJob& job) {
  const std::string stem = snapshot_stem(job.sequence);
  const std::string path = ctx_.output_path(stem, "json");
  SnapshotContext sc;
  sc.rank = ctx_.rank();
  sc.pid = ctx_.pid();
  sc.max_allocations = settings_.snapshot_max_allocations;
  if (!job.cuda_pickle.empty()) {
    const std::string pickle = ctx_.output_path(stem, "pickle");
    const std::string error = sdk::WholeFileWriter::write_file(pickle, job.cuda_pickle);
    if (error.empty()) {
      sc.cuda_pickle_file = base_name(pickle);
    } else {
      job.cuda_error = error;
    }
    std::string().swap(job.cuda_pickle);
  }
  const std::string error =
      sdk::WholeFileWriter::write_file(path, format_snapshot(job, paths_, sc));
  if (!error.empty()) {
    queue_.fail(error);
    return;
  }
  trace_->add_snapshot(job, base_name(path));
  summary_.add_snapshot({base_name(path), job.trigger, job.reason, job.step});
}

void MemoryWriter::flush() {
  queue_.flush();
}

MemoryWriter::Closing MemoryWriter::close(RunTotals totals) {
  // The host never deletes the sink, so this writer lives on after close():
  // it must not keep its buffers. The queue keeps two item vectors (up to
  // 1024 records each) that swap places every round: the writer thread frees
  // the batch it was handed in every round from here on, and queues a marker
  // so the next round has a batch to free. After the flush below every round
  // frees one, so the last round before the queue's final one leaves an
  // empty vector behind, which the final round swaps into the queue.
  releasing_.store(true, std::memory_order_relaxed);
  if (!queue_.push_beyond_capacity(WriterItem(std::unique_ptr<SnapshotJob>()))) {
    markers_refused_.fetch_add(1, std::memory_order_relaxed);
  }
  queue_.flush();
  queue_.close();  // writes what is queued; the writer thread is gone after it
  totals.dropped_records = dropped();
  const LeakCriteria criteria{settings_.leak_min_steps, settings_.leak_min_bytes};
  Closing c;
  c.summary_file = ctx_.output_path("memory_summary", "json");
  const std::string error = sdk::WholeFileWriter::write_file(
      c.summary_file, summary_.to_json(paths_, totals, criteria, totals.tracking.enabled));
  if (!error.empty()) {
    queue_.fail(error);
    c.summary_file.clear();  // never announce a file that was not written
  }
  c.table = summary_.to_table(paths_, criteria, totals.stood_aside_why);
  for (const auto& s : summary_.leak_suspects(criteria)) c.suspects.push_back(paths_.path(s.path));
  jsonl_->close();
  trace_->close();
  if (jsonl_->failed()) queue_.fail(jsonl_->error());
  if (trace_->file().failed()) queue_.fail(trace_->file().error());
  if (!trace_->rename_error().empty()) queue_.fail(trace_->rename_error());
  // Only the writer thread, now gone, used these.
  jsonl_.reset();
  trace_.reset();
  summary_ = RegionSummary();
  std::string().swap(line_);
  return c;
}

std::string MemoryWriter::failure() const {
  return queue_.error();
}

}  // namespace regiontrace::memory
