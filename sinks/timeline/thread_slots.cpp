#include "thread_slots.hpp"

#include <sys/mman.h>

#include <fstream>
#include <new>
#include <string>
#include <type_traits>

namespace regiontrace::timeline {

namespace {

using PageEntry = std::atomic<std::atomic<ThreadSlot*>*>;
constexpr std::size_t kDirectoryBytes = SlotTable::kPages * sizeof(PageEntry);

// The page directory is an anonymous mapping: all-zero (null) pages that
// cost nothing until a thread number reaches them, so a sink instance, which
// the host keeps after shutdown, holds one resident page of it, not 64 KiB.
PageEntry* map_directory() {
  void* p =
      ::mmap(nullptr, kDirectoryBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  // Trivial construction writes nothing (and array new adds no cookie):
  // the mapping's zero bytes are the entries' null pointers.
  static_assert(std::is_trivially_default_constructible_v<PageEntry> &&
                std::is_trivially_destructible_v<PageEntry>);
  return new (p) PageEntry[SlotTable::kPages];  // default-initialised: nothing written
}

}  // namespace

SlotTable::SlotTable() : pages_(map_directory()) {}

SlotTable::~SlotTable() {
  ::munmap(pages_, kDirectoryBytes);
}

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
