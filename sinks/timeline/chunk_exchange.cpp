#include "chunk_exchange.hpp"

namespace regiontrace::timeline {

bool ChunkExchange::wake_writer_locked() const {
  return writer_asleep_ || full_.size() >= wake_at_;
}

Chunk* ChunkExchange::take_empty_locked(std::uint64_t slot) {
  Chunk* c = nullptr;
  if (!free_.empty()) {
    c = free_.back();
    free_.pop_back();
  } else if (all_.size() < capacity_) {
    // `new Chunk`, not make_unique: only `used` bytes are ever read, and
    // value-initialising would zero the 64 KiB of every new chunk.
    all_.push_back(std::unique_ptr<Chunk>(new Chunk));
    c = all_.back().get();
  } else {
    exhausted_.store(true, std::memory_order_relaxed);
    return nullptr;
  }
  c->slot = slot;
  c->used.store(0, std::memory_order_relaxed);
  return c;
}

bool ChunkExchange::trade(Chunk*& current, std::uint64_t slot) {
  bool wake = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (closed_) return false;
    const bool queued = current != nullptr && current->used.load(std::memory_order_relaxed) > 0;
    if (queued) {
      // Goes to the writer even when no empty chunk is free: the writer
      // empties it, and the caller drops until then.
      full_.push_back(current);
      ++queued_total_;
      current = nullptr;
    }
    if (current == nullptr) current = take_empty_locked(slot);
    // A caller left without a chunk drops until the writer gives one back.
    wake = current == nullptr || (queued && wake_writer_locked());
    if (wake) ++wakes_;
  }
  if (wake) ready_.notify_one();
  return true;
}

void ChunkExchange::hand_over(Chunk*& current) {
  bool wake = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (closed_ || current == nullptr || current->used.load(std::memory_order_relaxed) == 0) return;
    full_.push_back(current);
    ++queued_total_;
    current = nullptr;
    wake = wake_writer_locked();
    if (wake) ++wakes_;
  }
  if (wake) ready_.notify_one();
}

Chunk* ChunkExchange::next_full() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!closed_ && full_.empty()) {
    if (idle_polls_ >= kIdlePolls) {
      writer_asleep_ = true;
      ready_.wait(lock);
      writer_asleep_ = false;
      idle_polls_ = 0;
    } else if (!ready_.wait_for(lock, kPoll, [this] { return closed_ || !full_.empty(); })) {
      ++idle_polls_;
    }
  }
  if (full_.empty()) return nullptr;
  idle_polls_ = 0;
  Chunk* c = full_.front();
  full_.pop_front();
  return c;
}

std::uint64_t ChunkExchange::queued_total() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return queued_total_;
}

std::uint64_t ChunkExchange::wakes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return wakes_;
}

bool ChunkExchange::writer_asleep() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return writer_asleep_;
}

void ChunkExchange::give_back(Chunk* empty) {
  std::lock_guard<std::mutex> lock(mutex_);
  free_.push_back(empty);
  if (!closed_) exhausted_.store(false, std::memory_order_relaxed);
}

void ChunkExchange::close() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    closed_ = true;
    exhausted_.store(true, std::memory_order_relaxed);
  }
  ready_.notify_all();
}

bool ChunkExchange::closed() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return closed_;
}

void ChunkExchange::release_all() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!closed_) return;
  free_.clear();
  full_.clear();
  all_.clear();
}

std::size_t ChunkExchange::made() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return all_.size();
}

}  // namespace regiontrace::timeline
