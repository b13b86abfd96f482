#include "memory_writer.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "record_format.hpp"
#include "snapshot_format.hpp"

namespace regiontrace::memory {
namespace {

// The writer wakes at least this often; a push wakes it early only when the
// queue holds a batch (one notify per batch, not per record), which keeps the
// queue small and in cache.
constexpr auto kWriterPeriod = std::chrono::milliseconds(50);
constexpr std::size_t kWakeBatch = 2048;

std::string base_name(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string snapshot_stem(int sequence) {
  char buf[48];
  std::snprintf(buf, sizeof(buf), "memory_snapshot_%04d", sequence);
  return buf;
}

}  // namespace

MemoryWriter::MemoryWriter(const SinkContext& ctx, const MemorySettings& settings,
                           const RegionPaths& paths)
    : ctx_(ctx),
      settings_(settings),
      paths_(paths),
      capacity_(static_cast<std::size_t>(settings.queue_capacity)) {
  jsonl_.open(ctx.output_path("memory", "jsonl"));
  if (settings.trace) trace_.open(ctx.output_path("memory_trace", "json"), ctx.pid(), ctx.rank());
  thread_ = std::thread([this] { run(); });
}

MemoryWriter::~MemoryWriter() {
  // Sinks are never deleted by the host; this is for tests and safety.
  if (thread_.joinable()) {
    {
      std::lock_guard<std::mutex> lock(queue_mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }
}

bool MemoryWriter::push(RegionRecord&& record) {
  bool wake = false;
  {
    std::lock_guard<std::mutex> lock(queue_mutex_);
    if (!accepting_ || queue_.size() >= capacity_) {
      dropped_.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    queue_.emplace_back(std::move(record));
    wake = queue_.size() == std::min(capacity_ / 2, kWakeBatch);
  }
  if (wake) wake_.notify_one();
  return true;
}

void MemoryWriter::push(std::unique_ptr<SnapshotJob> job) {
  {
    std::lock_guard<std::mutex> lock(queue_mutex_);
    if (!accepting_) return;
    queue_.emplace_back(std::move(job));
  }
  wake_.notify_one();
}

void MemoryWriter::run() {
  std::unique_lock<std::mutex> lock(queue_mutex_);
  while (!stopping_) {
    wake_.wait_for(lock, kWriterPeriod);
    if (queue_.empty()) continue;
    lock.unlock();
    drain();
    lock.lock();
  }
}

void MemoryWriter::drain() {
  std::lock_guard<std::mutex> process(process_mutex_);
  {
    std::lock_guard<std::mutex> lock(queue_mutex_);
    batch_.swap(queue_);
  }
  for (WriterItem& item : batch_) {
    if (auto* r = std::get_if<RegionRecord>(&item)) {
      write_record(*r);
    } else {
      write_snapshot(*std::get<std::unique_ptr<SnapshotJob>>(item));
    }
  }
  batch_.clear();
  if (jsonl_.failed()) note_failure(jsonl_.error());
  if (trace_.file().failed()) note_failure(trace_.file().error());
}

void MemoryWriter::write_record(const RegionRecord& r) {
  line_.clear();
  append_region_record(line_, r, paths_);
  jsonl_.write(line_);
  trace_.add_region(r, paths_);
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
    const std::string error = OutputFile::write_whole(pickle, job.cuda_pickle);
    if (error.empty()) {
      sc.cuda_pickle_file = base_name(pickle);
    } else {
      job.cuda_error = error;
    }
    std::string().swap(job.cuda_pickle);
  }
  const std::string error = OutputFile::write_whole(path, format_snapshot(job, paths_, sc));
  if (!error.empty()) {
    note_failure(error);
    return;
  }
  trace_.add_snapshot(job, base_name(path));
  summary_.add_snapshot({base_name(path), job.trigger, job.reason, job.step});
}

void MemoryWriter::flush() {
  drain();
  std::lock_guard<std::mutex> process(process_mutex_);
  jsonl_.flush();
  trace_.flush();
  if (jsonl_.failed()) note_failure(jsonl_.error());
}

MemoryWriter::Closing MemoryWriter::close(RunTotals totals) {
  {
    std::lock_guard<std::mutex> lock(queue_mutex_);
    accepting_ = false;
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  drain();
  std::lock_guard<std::mutex> process(process_mutex_);
  totals.dropped_records = dropped_.load();
  const LeakCriteria criteria{settings_.leak_min_steps, settings_.leak_min_bytes};
  Closing c;
  c.summary_file = ctx_.output_path("memory_summary", "json");
  const std::string error = OutputFile::write_whole(
      c.summary_file, summary_.to_json(paths_, totals, criteria, totals.tracking.enabled));
  if (!error.empty()) note_failure(error);
  c.table = summary_.to_table(paths_, criteria, totals.stood_aside_why);
  for (const auto& s : summary_.leak_suspects(criteria)) c.suspects.push_back(paths_.path(s.path));
  jsonl_.close();
  trace_.close();
  if (jsonl_.failed()) note_failure(jsonl_.error());
  if (trace_.file().failed()) note_failure(trace_.file().error());
  return c;
}

void MemoryWriter::note_failure(const std::string& message) {
  std::lock_guard<std::mutex> lock(failure_mutex_);
  if (failure_.empty()) failure_ = message;
  failed_.store(true, std::memory_order_release);
}

std::string MemoryWriter::failure() const {
  if (!failed_.load(std::memory_order_acquire)) return {};
  std::lock_guard<std::mutex> lock(failure_mutex_);
  return failure_;
}

}  // namespace regiontrace::memory
