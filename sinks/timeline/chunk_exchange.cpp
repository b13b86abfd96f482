#include "chunk_exchange.hpp"

namespace regiontrace::timeline {

Chunk* ChunkExchange::take_empty_locked(std::uint64_t slot) {
  Chunk* c = nullptr;
  if (!free_.empty()) {
    c = free_.back();
    free_.pop_back();
  } else if (all_.size() < capacity_) {
    all_.push_back(std::make_unique<Chunk>());
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
    if (current != nullptr && current->used.load(std::memory_order_relaxed) > 0) {
      // Goes to the writer even when no empty chunk is free: the writer
      // empties it, and the caller drops until then.
      full_.push_back(current);
      current = nullptr;
      wake = true;
    }
    if (current == nullptr) current = take_empty_locked(slot);
  }
  if (wake) ready_.notify_one();
  return true;
}

void ChunkExchange::hand_over(Chunk*& current) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (closed_ || current == nullptr || current->used.load(std::memory_order_relaxed) == 0) return;
    full_.push_back(current);
    current = nullptr;
  }
  ready_.notify_one();
}

Chunk* ChunkExchange::next_full() {
  std::unique_lock<std::mutex> lock(mutex_);
  ready_.wait(lock, [this] { return closed_ || !full_.empty(); });
  if (full_.empty()) return nullptr;
  Chunk* c = full_.front();
  full_.pop_front();
  return c;
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
