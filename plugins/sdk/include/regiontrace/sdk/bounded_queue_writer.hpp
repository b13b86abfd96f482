// A bounded queue in front of one writer thread: the shape every sink that
// writes files needs, so formatting, compression and I/O never run on the
// application's threads, whose regions must stay a few nanoseconds.
//
// Producers (any thread) push() items: a lock and a move, no system call in
// the common case. The writer thread wakes when `wake_batch` items wait,
// when a flush is asked, or every `idle_wakeup`; it takes the whole queue at
// once and hands it to the write callback outside the lock, so producers
// never wait for I/O unless the queue is full and the policy says block.
//
// What cannot be kept is counted, never silently lost:
//   - queue full, OnFull::kDrop: the item is refused and counted (dropped());
//   - queue full, OnFull::kBlock: push() waits for room;
//   - after close() or after a write error: refused and counted (refused()).
//
// The first write error is sticky: the write callback reports it by
// throwing (or by calling fail()); the message is kept (error()), later
// pushes are refused and queued items are discarded instead of written, so
// a sink that hit a full disk stops cleanly and reports once.
//
// Header-only; the callbacks are std::function because they run once per
// batch, not once per item.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace regiontrace::sdk {

enum class OnFull {
  kBlock,  // the producer waits for room: nothing is lost, the app may slow
  kDrop,   // the item is refused and counted: the app never waits
};

template <typename Item>
class BoundedQueueWriter {
 public:
  struct Options {
    std::size_t capacity = 65536;  // items waiting to be written
    OnFull on_full = OnFull::kBlock;
    // The writer wakes at least this often, so a slow trickle still reaches
    // the file without a wake-up (a system call) per item.
    std::chrono::milliseconds idle_wakeup{20};
    // Items that wake the writer early; 0: half the capacity. 1 writes each
    // item as soon as it comes (for few, large items).
    std::size_t wake_batch = 0;
    // Start the thread on the first push rather than in the constructor, for
    // sinks that often write nothing.
    bool start_on_first_push = false;
  };

  // Runs on the writer thread with every item taken at once; may reorder or
  // consume them (the vector is cleared afterwards). Throws to report a write
  // error.
  using WriteBatch = std::function<void(std::vector<Item>& batch)>;
  // Runs on the writer thread after the batch that completes a flush(), and
  // after the last batch at close(): push buffered bytes to the file. Throws
  // to report a write error.
  using Sync = std::function<void()>;

  BoundedQueueWriter(Options options, WriteBatch write, Sync sync = {})
      : options_(options),
        write_(std::move(write)),
        sync_(std::move(sync)),
        wake_batch_(options_.wake_batch != 0 ? options_.wake_batch
                                             : std::max<std::size_t>(1, options_.capacity / 2)) {
    if (options_.capacity == 0) options_.capacity = 1;
    pending_.reserve(std::min<std::size_t>(options_.capacity, 1024));
    if (!options_.start_on_first_push) thread_ = std::thread([this] { run(); });
  }
  ~BoundedQueueWriter() { close(); }
  BoundedQueueWriter(const BoundedQueueWriter&) = delete;
  BoundedQueueWriter& operator=(const BoundedQueueWriter&) = delete;

  // False when the item was not queued (dropped, closed or failed); a
  // refused item is left as it was, so the caller may still use it.
  bool push(Item&& item) {
    return push(std::move(item), [](Item&, std::uint64_t) {});
  }

  // As push(), and calls stamp(item, n) under the queue's lock just before
  // the item is queued, n counting every item offered (dropped ones too).
  // Gives records sequence numbers in queue order, with gaps where records
  // were dropped.
  template <typename Stamp>
  bool push(Item&& item, Stamp&& stamp) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (closed_ || !error_.empty()) {
      ++refused_;
      return false;
    }
    if (pending_.size() >= options_.capacity) {
      if (options_.on_full == OnFull::kDrop) {
        ++dropped_;
        ++offered_;
        return false;
      }
      work_.notify_one();
      space_.wait(lock, [this] {
        return pending_.size() < options_.capacity || closed_ || !error_.empty();
      });
      if (closed_ || !error_.empty()) {
        ++refused_;
        return false;
      }
    }
    stamp(item, offered_++);
    pending_.push_back(std::move(item));
    start_locked();
    // Only a filling queue wakes the writer early: no system call per item.
    if (pending_.size() == wake_batch_) work_.notify_one();
    return true;
  }

  // Queues an item past the capacity, never waiting and never dropping it:
  // for rare items that must not be lost and must not stall the caller (a
  // memory snapshot among many small records). Refused only when closed or
  // failed.
  bool push_beyond_capacity(Item&& item) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (closed_ || !error_.empty()) {
      ++refused_;
      return false;
    }
    ++offered_;
    pending_.push_back(std::move(item));
    start_locked();
    work_.notify_one();
    return true;
  }

  // Asks the writer to write what is queued now; does not wait.
  void request_flush() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (closed_) return;
    ++flush_wanted_;
    start_locked();
    work_.notify_one();
  }

  // Writes (and syncs) everything pushed before the call; waits for it.
  // False when a write error happened or the writer is closed.
  bool flush() {
    std::unique_lock<std::mutex> lock(mutex_);
    if (closed_) return false;
    const std::uint64_t ticket = ++flush_wanted_;
    start_locked();
    work_.notify_one();
    done_.wait(lock, [&] { return flush_done_ >= ticket || writer_exited_; });
    return error_.empty();
  }

  // Writes everything queued, syncs, and stops the thread. Pushes racing
  // with it are refused. Idempotent; the destructor calls it.
  void close() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (closed_) return;
      closed_ = true;
      work_.notify_one();
      space_.notify_all();
    }
    if (thread_.joinable()) {
      thread_.join();
    } else {
      drain_on_caller();  // never started (start_on_first_push): nothing or only a flush
    }
  }

  // Records a write error from anywhere (the first one wins) and refuses
  // what follows, as a throwing callback does.
  void fail(std::string message) {
    std::lock_guard<std::mutex> lock(mutex_);
    fail_locked(std::move(message));
  }

  // Lock-free, so a producer can check it per item and stop early.
  bool failed() const { return failed_.load(std::memory_order_relaxed); }
  // The first write error, "" when none.
  std::string error() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return error_;
  }
  // Refused because the queue was full under OnFull::kDrop.
  std::uint64_t dropped() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return dropped_;
  }
  // Refused because the writer was closed or had failed.
  std::uint64_t refused() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return refused_;
  }
  // Items handed to the write callback in batches that did not fail.
  std::uint64_t written() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return written_;
  }

 private:
  void start_locked() {
    if (!thread_.joinable() && !closed_) thread_ = std::thread([this] { run(); });
  }

  void fail_locked(std::string message) {
    if (!error_.empty()) return;
    error_ = message.empty() ? std::string("write failed") : std::move(message);
    failed_.store(true, std::memory_order_relaxed);
    space_.notify_all();  // blocked producers: refused now
  }

  // One round: take the queue, write it, sync when asked. Lock held on entry
  // and exit, released around the callbacks.
  void write_round(std::unique_lock<std::mutex>& lock, std::vector<Item>& batch, bool final) {
    const std::uint64_t ticket = flush_wanted_;
    batch.swap(pending_);  // pending_ gets the emptied vector of the last round
    space_.notify_all();
    const bool write = error_.empty();
    const bool sync = sync_ && (final || ticket > flush_done_);
    lock.unlock();
    std::string failure;
    const std::size_t count = batch.size();
    if (write) {
      try {
        if (!batch.empty()) write_(batch);
        if (sync) sync_();
      } catch (const std::exception& e) {
        failure = e.what();
      } catch (...) {
        failure = "unknown error while writing";
      }
    }
    batch.clear();
    lock.lock();
    if (!failure.empty()) fail_locked(std::move(failure));
    if (write && error_.empty()) written_ += count;
    if (ticket > flush_done_) {
      flush_done_ = ticket;
      done_.notify_all();
    }
  }

  void run() {
    std::vector<Item> batch;
    batch.reserve(std::min<std::size_t>(options_.capacity, 1024));
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      work_.wait_for(lock, options_.idle_wakeup, [this] {
        return closed_ || flush_wanted_ > flush_done_ || pending_.size() >= wake_batch_;
      });
      // Once closed nothing more is queued: this round is the last.
      const bool stop = closed_;
      write_round(lock, batch, stop);
      if (stop) break;
    }
    writer_exited_ = true;
    done_.notify_all();
  }

  void drain_on_caller() {
    std::vector<Item> batch;
    std::unique_lock<std::mutex> lock(mutex_);
    write_round(lock, batch, true);
    writer_exited_ = true;
    done_.notify_all();
  }

  Options options_;
  const WriteBatch write_;
  const Sync sync_;
  const std::size_t wake_batch_;

  mutable std::mutex mutex_;
  std::condition_variable work_;   // writer waits: items, flush, close
  std::condition_variable space_;  // blocked producers wait for room
  std::condition_variable done_;   // flush() waits for the writer
  std::vector<Item> pending_;
  std::uint64_t offered_ = 0;
  std::uint64_t dropped_ = 0;
  std::uint64_t refused_ = 0;
  std::uint64_t written_ = 0;
  std::uint64_t flush_wanted_ = 0;
  std::uint64_t flush_done_ = 0;
  bool closed_ = false;
  bool writer_exited_ = false;
  std::string error_;
  std::atomic<bool> failed_{false};
  std::thread thread_;
};

}  // namespace regiontrace::sdk
