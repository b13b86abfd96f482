#include "thread_slots.hpp"

#include <fstream>
#include <string>

namespace regiontrace::timeline {

SlotTable::SlotTable() : pages_(new std::atomic<std::atomic<ThreadSlot*>*>[kPages]) {
  for (std::uint64_t i = 0; i < kPages; ++i) pages_[i].store(nullptr, std::memory_order_relaxed);
}

SlotTable::~SlotTable() = default;

namespace {

// Any thread's name, from any thread: spans may be handed over by another.
std::string thread_name(long os_tid) {
  std::ifstream comm("/proc/self/task/" + std::to_string(os_tid) + "/comm");
  std::string name;
  if (std::getline(comm, name) && !name.empty()) return name;
  return "thread " + std::to_string(os_tid);
}

}  // namespace

ThreadSlot* SlotTable::create(std::uint64_t number, long os_tid) {
  const std::uint64_t page = number >> kPageBits;
  if (page >= kPages) return nullptr;
  std::lock_guard<std::mutex> lock(mutex_);
  std::atomic<ThreadSlot*>* p = pages_[page].load(std::memory_order_relaxed);
  if (p == nullptr) {
    page_storage_.emplace_back(new std::atomic<ThreadSlot*>[std::size_t{1} << kPageBits]);
    p = page_storage_.back().get();
    for (std::size_t i = 0; i < (std::size_t{1} << kPageBits); ++i)
      p[i].store(nullptr, std::memory_order_relaxed);
    pages_[page].store(p, std::memory_order_release);
  }
  std::atomic<ThreadSlot*>& entry = p[number & ((1u << kPageBits) - 1)];
  if (ThreadSlot* existing = entry.load(std::memory_order_relaxed)) return existing;
  auto slot = std::make_unique<ThreadSlot>();
  slot->index = slots_.size();
  slot->os_tid = os_tid;
  slot->name = thread_name(os_tid);
  slots_.push_back(std::move(slot));
  entry.store(slots_.back().get(), std::memory_order_release);
  return slots_.back().get();
}

std::vector<ThreadSlot*> SlotTable::all() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<ThreadSlot*> out;
  out.reserve(slots_.size());
  for (const auto& s : slots_) out.push_back(s.get());
  return out;
}

}  // namespace regiontrace::timeline
