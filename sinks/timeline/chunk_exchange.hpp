// Where application threads trade a full chunk for an empty one, and where
// the writer thread picks up full ones and gives them back empty. One short
// critical section per 64 KiB chunk (2048 regions); the recording itself
// takes no lock. Memory is bounded: at most `capacity` chunks ever exist,
// made on demand; when none is free the caller drops and counts.
//
// A busy writer polls instead of being woken per chunk: waking a sleeping
// thread is a futex system call and, in a VM, an interrupt to the other
// vCPU, ~10 us that the recording thread paid once per 2048 regions (5 ns a
// region, half of the sink's cost in regiontrace_timeline_bench). An
// application thread wakes the writer only when it sleeps for good (no
// chunk came in its last polls), when the queue holds a quarter of the
// chunks, or when it is left without an empty chunk.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "timeline_records.hpp"

namespace regiontrace::timeline {

class ChunkExchange {
 public:
  explicit ChunkExchange(std::size_t capacity)
      : capacity_(capacity == 0 ? 1 : capacity), wake_at_((capacity_ + 3) / 4) {}

  // How long a busy writer waits before it looks at the queue again, and
  // how many empty looks send it to sleep until woken.
  static constexpr std::chrono::milliseconds kPoll{2};
  static constexpr int kIdlePolls = 4;

  // Application thread: hands `current` (when it holds records) to the
  // writer and puts an empty chunk in its place, or null when none is free
  // (the caller drops until one is). Closed: changes nothing, returns false.
  // `current` is only changed under the lock, so close() reads every
  // thread's chunk safely once it has closed the exchange.
  bool trade(Chunk*& current, std::uint64_t slot);
  // Without the lock: no trade can give a chunk now (all in use or closed),
  // so a thread without one drops at once instead of queueing on the lock.
  bool exhausted() const { return exhausted_.load(std::memory_order_relaxed); }
  // Hands `current` over without taking one (a thread that exits).
  void hand_over(Chunk*& current);

  // Chunks handed to the writer so far (by trade() and hand_over()).
  std::uint64_t queued_total() const;

  // Writer thread: the next full chunk, or null once closed and drained.
  Chunk* next_full();
  // For tests: the times an application thread woke the writer, and
  // whether the writer waits to be woken (not polling).
  std::uint64_t wakes() const;
  bool writer_asleep() const;
  void give_back(Chunk* empty);

  // No more trades; next_full() returns what is queued, then null.
  void close();
  bool closed() const;

  std::size_t made() const;
  // After close(), once the writer is done and no thread holds a chunk
  // (every `current` given to trade() is null): frees every chunk.
  void release_all();

 private:
  Chunk* take_empty_locked(std::uint64_t slot);

  bool wake_writer_locked() const;

  const std::size_t capacity_;
  const std::size_t wake_at_;  // queued chunks that wake a polling writer
  mutable std::mutex mutex_;
  std::condition_variable ready_;
  std::vector<std::unique_ptr<Chunk>> all_;
  std::vector<Chunk*> free_;
  std::deque<Chunk*> full_;
  bool closed_ = false;
  bool writer_asleep_ = false;  // waiting without a timeout
  int idle_polls_ = 0;
  std::uint64_t wakes_ = 0;
  std::uint64_t queued_total_ = 0;
  std::atomic<bool> exhausted_{false};
};

}  // namespace regiontrace::timeline
