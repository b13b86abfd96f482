#include "live_allocation_table.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <new>
#include <utility>

#include "idle_pool.hpp"

namespace regiontrace::memory {
namespace {

std::size_t page_size() {
  static const std::size_t size = [] {
    const long s = ::sysconf(_SC_PAGESIZE);
    return s > 0 ? static_cast<std::size_t>(s) : std::size_t{4096};
  }();
  return size;
}

std::size_t round_to_pages(std::size_t bytes) {
  const std::size_t page = page_size();
  return (bytes + page - 1) / page * page;
}

constexpr std::size_t kHugePage = std::size_t{2} << 20;

}  // namespace

LiveAllocationTable& LiveAllocationTable::acquire(std::size_t max_entries, std::size_t max_paths) {
  const std::size_t bound = std::max<std::size_t>(max_entries, 1);
  LiveAllocationTable* table =
      IdlePool<LiveAllocationTable>::instance().take([&](const LiveAllocationTable* t) {
        return t->max_entries() == bound && t->max_paths() == max_paths;
      });
  if (table == nullptr) return *new LiveAllocationTable(bound, max_paths);
  // What calls from the closed instance put in after recycle().
  std::lock_guard<SpinLock> lock(table->mutex_);
  if (table->used_ != 0) table->clear_locked();
  return *table;
}

void LiveAllocationTable::recycle(LiveAllocationTable& table) {
  table.clear();
  IdlePool<LiveAllocationTable>::instance().put(&table);
}

void LiveAllocationTable::clear() {
  std::lock_guard<SpinLock> lock(mutex_);
  clear_locked();
}

void LiveAllocationTable::clear_locked() {
  // Private anonymous pages read as zeros after MADV_DONTNEED: empty slots
  // and path figures of 0. The whole mapping in one call: huge pages are
  // dropped whole (a partial drop would split them into 4 kB ones).
  if (::madvise(mapping_, mapping_bytes_, MADV_DONTNEED) != 0) {
    std::memset(mapping_, 0, mapping_bytes_);
  }
  used_ = 0;
}

LiveAllocationTable::~LiveAllocationTable() {
  if (mapping_ != nullptr) ::munmap(mapping_, mapping_bytes_);
}

LiveAllocationTable::LiveAllocationTable(std::size_t max_entries, std::size_t max_paths)
    : max_entries_(std::max<std::size_t>(max_entries, 1)), max_paths_(max_paths) {
  // At most half full: short probes.
  std::size_t slots = 64;
  while (slots < 2 * max_entries_) slots *= 2;
  mask_ = slots - 1;
  const std::size_t slot_bytes = round_to_pages(slots * sizeof(LiveAllocation));
  mapping_bytes_ = slot_bytes + round_to_pages(max_paths_ * sizeof(std::atomic<std::int64_t>));
  // Zero-filled on first touch: an empty table costs address space only.
  // Tables of a huge page or more sit on huge page boundaries and ask for
  // huge pages: windows are spread over the whole table by the hash, so with
  // 4 kB pages a new window was a TLB miss (a page walk, twice as long in a
  // virtual machine); this way an 8 MB table is 4 TLB entries.
  const bool huge = mapping_bytes_ >= kHugePage;
  if (huge) mapping_bytes_ = (mapping_bytes_ + kHugePage - 1) / kHugePage * kHugePage;
  const std::size_t reserve = mapping_bytes_ + (huge ? kHugePage : 0);
  void* m = ::mmap(nullptr, reserve, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) throw std::bad_alloc();
  if (huge) {
    // Keep the aligned part of the reservation only.
    const auto start = reinterpret_cast<std::uintptr_t>(m);
    const std::uintptr_t aligned = (start + kHugePage - 1) / kHugePage * kHugePage;
    if (aligned > start) ::munmap(m, aligned - start);
    const std::uintptr_t end = aligned + mapping_bytes_;
    const std::uintptr_t reserved_end = start + reserve;
    if (reserved_end > end) ::munmap(reinterpret_cast<void*>(end), reserved_end - end);
    m = reinterpret_cast<void*>(aligned);
#ifdef MADV_HUGEPAGE
    ::madvise(m, mapping_bytes_, MADV_HUGEPAGE);  // a hint: fine when refused
#endif
  }
  mapping_ = m;
  slots_ = static_cast<LiveAllocation*>(m);
  path_bytes_ = reinterpret_cast<std::atomic<std::int64_t>*>(static_cast<char*>(m) + slot_bytes);
}

std::int64_t LiveAllocationTable::live_bytes(int path) const {
  if (path < 0 || static_cast<std::size_t>(path) >= max_paths_) return 0;
  return path_bytes_[path].load(std::memory_order_relaxed);
}

std::size_t LiveAllocationTable::size() const {
  std::lock_guard<SpinLock> lock(mutex_);
  return used_;
}

void LiveAllocationTable::place(LiveAllocation a, std::size_t i, std::size_t d) {
  for (;;) {
    if (slots_[i].address == 0) {
      slots_[i] = a;
      return;
    }
    const std::size_t resident = distance(i);
    if (resident < d) {
      std::swap(a, slots_[i]);
      d = resident;
    }
    i = (i + 1) & mask_;
    ++d;
  }
}

void LiveAllocationTable::shift_back(std::size_t i) {
  for (;;) {
    const std::size_t next = (i + 1) & mask_;
    if (slots_[next].address == 0 || distance(next) == 0) break;
    slots_[i] = slots_[next];
    i = next;
  }
  slots_[i] = LiveAllocation{};
}

std::vector<LiveAllocation> LiveAllocationTable::copy() const {
  std::vector<LiveAllocation> out;
  out.reserve(size());  // outside the lock: its hold stays one scan
  std::lock_guard<SpinLock> lock(mutex_);
  for (std::size_t i = 0; i <= mask_; ++i) {
    if (slots_[i].address != 0) out.push_back(slots_[i]);
  }
  return out;
}

}  // namespace regiontrace::memory
