#include "live_allocation_table.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <new>

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
  for (std::size_t k = 0; k < table->shard_count(); ++k) {
    Shard& s = table->shards_[k];
    std::lock_guard<SpinLock> lock(s.mutex);
    if (s.used != 0) clear_locked(s);
  }
  return *table;
}

void LiveAllocationTable::recycle(LiveAllocationTable& table) {
  table.clear();
  IdlePool<LiveAllocationTable>::instance().put(&table);
}

void LiveAllocationTable::clear() {
  // Every shard at once, so that the whole mapping goes in one call: huge
  // pages are dropped whole (a partial drop would split them into 4 kB ones).
  for (std::size_t k = 0; k < shard_count(); ++k) shards_[k].mutex.lock();
  if (::madvise(mapping_, mapping_bytes_, MADV_DONTNEED) != 0) {
    std::memset(mapping_, 0, mapping_bytes_);
  }
  for (std::size_t k = 0; k < shard_count(); ++k) {
    shards_[k].used = 0;
    shards_[k].mutex.unlock();
  }
}

void LiveAllocationTable::clear_locked(Shard& s) {
  // Private anonymous pages read as zeros after MADV_DONTNEED: empty slots
  // and path figures of 0.
  if (::madvise(s.slots, s.bytes, MADV_DONTNEED) != 0) std::memset(s.slots, 0, s.bytes);
  s.used = 0;
}

LiveAllocationTable::~LiveAllocationTable() {
  if (mapping_ != nullptr) ::munmap(mapping_, mapping_bytes_);
}

LiveAllocationTable::LiveAllocationTable(std::size_t max_entries, std::size_t max_paths)
    : max_entries_(std::max<std::size_t>(max_entries, 1)), max_paths_(max_paths) {
  // About 1024 entries per shard at least: small tables keep an exact bound,
  // large ones spread the lock over up to 64 shards.
  while (shard_bits_ < kMaxShardBits && (max_entries_ >> (shard_bits_ + 1)) >= 1024) ++shard_bits_;
  const std::size_t shards = std::size_t{1} << shard_bits_;
  shards_ = std::make_unique<Shard[]>(shards);
  std::size_t remaining = max_entries_;
  for (std::size_t i = 0; i < shards; ++i) {
    Shard& s = shards_[i];
    s.limit = remaining / (shards - i);
    remaining -= s.limit;
    // At most half full: short probes.
    std::size_t slots = 16;
    while (slots < 2 * s.limit) slots *= 2;
    s.mask = slots - 1;
    s.bytes = round_to_pages(slots * sizeof(LiveAllocation)) +
              round_to_pages(max_paths_ * sizeof(std::atomic<std::int64_t>));
    mapping_bytes_ += s.bytes;
  }
  // Zero-filled on first touch: an empty table costs address space only.
  // Tables of a huge page or more sit on huge page boundaries and ask for
  // huge pages: entries are spread over the whole table by the hash, so with
  // 4 kB pages nearly every insert is a TLB miss (a page walk, twice as long
  // in a virtual machine); this way an 8 MB table is 4 TLB entries.
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
  char* next = static_cast<char*>(m);
  for (std::size_t i = 0; i < shards; ++i) {
    Shard& s = shards_[i];
    s.slots = reinterpret_cast<LiveAllocation*>(next);
    s.path_bytes = reinterpret_cast<std::atomic<std::int64_t>*>(
        next + round_to_pages((s.mask + 1) * sizeof(LiveAllocation)));
    next += s.bytes;
  }
}

std::int64_t LiveAllocationTable::live_bytes(int path) const {
  if (path < 0 || static_cast<std::size_t>(path) >= max_paths_) return 0;
  std::int64_t sum = 0;
  for (std::size_t k = 0; k < shard_count(); ++k) {
    sum += shards_[k].path_bytes[path].load(std::memory_order_relaxed);
  }
  return sum;
}

std::size_t LiveAllocationTable::size() const {
  std::size_t n = 0;
  for (std::size_t i = 0; i < shard_count(); ++i) {
    std::lock_guard<SpinLock> lock(shards_[i].mutex);
    n += shards_[i].used;
  }
  return n;
}

void LiveAllocationTable::remove_at(Shard& s, std::size_t i) {
  // Backward-shift deletion: pull later members of the probe run into the
  // hole so that lookups never need tombstones.
  std::size_t j = i;
  for (;;) {
    j = (j + 1) & s.mask;
    if (s.slots[j].address == 0) break;
    const std::size_t k = home(s, mix(s.slots[j].address), s.slots[j].address);
    const bool movable = (i <= j) ? (k <= i || k > j) : (k <= i && k > j);
    if (movable) {
      s.slots[i] = s.slots[j];
      i = j;
    }
  }
  s.slots[i] = LiveAllocation{};
  --s.used;
}

std::vector<LiveAllocation> LiveAllocationTable::copy() const {
  std::vector<LiveAllocation> out;
  out.reserve(size());
  for (std::size_t k = 0; k < shard_count(); ++k) {
    const Shard& s = shards_[k];
    std::lock_guard<SpinLock> lock(s.mutex);
    for (std::size_t i = 0; i <= s.mask; ++i) {
      if (s.slots[i].address != 0) out.push_back(s.slots[i]);
    }
  }
  return out;
}

}  // namespace regiontrace::memory
