// The live libtorch allocations (track_allocations: true): address, size,
// the region path that allocated it and the step, so a snapshot can say
// which regions own the memory that is still alive.
//
// Bounded: at most `max_entries` allocations are kept; an insert beyond that
// fails and the caller counts it (overflow), nothing grows behind the user's
// back. Open addressing (linear probing, backward-shift deletion) in up to 8
// shards, each behind its own spin lock: an insert or erase is one short lock
// and a probe of a few slots, with no heap allocation and no shared counter
// after construction. The bound is kept per shard (max_entries / shards), so
// with several shards a shard can fill up a little before the whole table
// does; small tables have one shard and an exact bound.
//
// Where an address goes keeps the allocator's locality: a hash of its 4 kB
// page picks the shard and a window of 64 consecutive slots, its 64-byte
// line within the page (c10 aligns allocations to 64 bytes) the slot in the
// window. Allocators hand out addresses that march through a page, so the
// probes march through the table and the hardware prefetcher has the slots
// loaded ahead; a hash of the whole address sent every insert to a cold
// line (a cache miss that was most of the cost of tracking, the benchmark's
// 1.6x). The price: a page packed with 64-byte allocations fills its window,
// so neighbours probe further (about 1.3x per operation in that worst case,
// measured with the table at 90% of its bound).
//
// The table also keeps the bytes each region path holds (live_bytes()): per
// shard, updated under the shard's lock that the insert or erase holds
// anyway, so an allocation event costs one locked instruction here (the
// lock), not three (lock, then a shared per-path counter on insert and
// erase). Reading a path's figure sums the shards: few shards (libtorch
// serialises CPU allocations under its own mutex anyway), so that a region
// exit reads a handful of cache lines.
//
// Memory: the slots are one anonymous mapping (on huge pages where the
// kernel grants them: the hash spreads entries over the whole table, so with
// 4 kB pages nearly every insert missed the TLB), so pages nobody touched
// cost nothing, and clear() gives every page back (madvise(MADV_DONTNEED)) while
// the mapping stays: an insert or erase racing it still finds valid
// (zero-filled, that is empty) slots. The sink never deletes a table either:
// a closed instance hands its table to a process-wide pool (recycle()), and
// the next instance with the same bound takes it from there (acquire()), so
// init()/shutdown() cycles reuse one table instead of leaking one each.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "spin_lock.hpp"

namespace regiontrace::memory {

struct LiveAllocation {
  std::uintptr_t address = 0;  // 0 marks an empty slot
  std::int64_t bytes = 0;
  std::int64_t step = 0;
  std::int32_t path = 0;    // RegionPaths index
  std::int32_t device = 0;  // memory_devices.hpp index
};

class LiveAllocationTable {
 public:
  enum class InsertResult {
    kInserted,
    // The address was still in the table: its free was never seen (made on a
    // thread the sink does not hear from). The stale entry was replaced and
    // handed back so the caller can settle its accounts.
    kReplaced,
    kFull,
  };

  // `max_paths`: region path indices [0, max_paths) are accounted for in
  // live_bytes(); others are kept but not summed.
  explicit LiveAllocationTable(std::size_t max_entries, std::size_t max_paths = 64);
  ~LiveAllocationTable();
  LiveAllocationTable(const LiveAllocationTable&) = delete;
  LiveAllocationTable& operator=(const LiveAllocationTable&) = delete;

  // An empty table of this bound for a sink instance: one from the pool, or
  // a new one. Never deleted; give it back with recycle().
  static LiveAllocationTable& acquire(std::size_t max_entries, std::size_t max_paths);
  // Empties `table` (clear()) and keeps it for the next acquire(). Calls
  // still racing in from the closed instance stay safe: the table and its
  // locks live on; what they insert is cleared again at the next acquire().
  static void recycle(LiveAllocationTable& table);
  // Empties the table and returns its pages to the system. Any thread.
  void clear();

  // Starts loading the slot an insert or erase of `address` probes first,
  // so that a miss overlaps the caller's other work (a new page's window).
  void prefetch(std::uintptr_t address) const {
    const std::uint64_t h = mix(address);
    const Shard& s = shard_of(h);
    __builtin_prefetch(&s.slots[home(s, h, address)], 1);
  }
  InsertResult insert(const LiveAllocation& a, LiveAllocation* replaced);
  // False when the address is not tracked (allocated before tracking
  // started, or not kept because the table was full).
  bool erase(std::uintptr_t address, LiveAllocation* removed);

  // Bytes of the live allocations made in `path`. Any thread, no lock: each
  // shard's figure as of its last insert or erase.
  std::int64_t live_bytes(int path) const;

  std::size_t size() const;
  std::size_t max_entries() const { return max_entries_; }
  std::size_t max_paths() const { return max_paths_; }
  // A copy of every live entry, shard by shard (each shard is consistent).
  std::vector<LiveAllocation> copy() const;

 private:
  static constexpr int kMaxShardBits = 3;

  struct Shard {
    mutable SpinLock mutex;
    LiveAllocation* slots = nullptr;  // in mapping_, page-aligned
    // Bytes per region path held by this shard's entries: written under
    // `mutex` (a load and a store, no locked instruction), read by anyone.
    std::atomic<std::int64_t>* path_bytes = nullptr;  // in mapping_, after the slots
    std::size_t mask = 0;
    std::size_t used = 0;
    std::size_t limit = 0;  // entries this shard may hold
    std::size_t bytes = 0;  // of its slots and path figures, whole pages
  };

  static std::uint64_t mix(std::uintptr_t address);
  Shard& shard_of(std::uint64_t h) const {
    return shards_[shard_bits_ == 0 ? 0 : static_cast<std::size_t>(h >> (64 - shard_bits_))];
  }
  // `h`: mix(address). The page's window, then the line within the page.
  static std::size_t home(const Shard& s, std::uint64_t h, std::uintptr_t address) {
    return static_cast<std::size_t>((h >> 8) + ((address >> 6) & 63)) & s.mask;
  }
  static void remove_at(Shard& s, std::size_t i);
  // Owner of s.mutex.
  void add_path_bytes(Shard& s, std::int32_t path, std::int64_t bytes) const {
    if (static_cast<std::size_t>(path) >= max_paths_) return;
    std::atomic<std::int64_t>& b = s.path_bytes[path];
    b.store(b.load(std::memory_order_relaxed) + bytes, std::memory_order_relaxed);
  }
  // Owner of s.mutex: zero the slots, giving the pages back.
  static void clear_locked(Shard& s);
  std::size_t shard_count() const { return std::size_t{1} << shard_bits_; }

  const std::size_t max_entries_;
  const std::size_t max_paths_;
  int shard_bits_ = 0;
  std::unique_ptr<Shard[]> shards_;
  void* mapping_ = nullptr;
  std::size_t mapping_bytes_ = 0;
};

// Inline: called for every allocation event with tracking on.
inline std::uint64_t LiveAllocationTable::mix(std::uintptr_t address) {
  // The page: every address in it shares the shard and the window.
  std::uint64_t x = static_cast<std::uint64_t>(address) >> 12;
  x ^= x >> 31;
  x *= 0x9E3779B97F4A7C15ull;
  x ^= x >> 29;
  return x;
}

inline LiveAllocationTable::InsertResult LiveAllocationTable::insert(const LiveAllocation& a,
                                                                     LiveAllocation* replaced) {
  const std::uint64_t h = mix(a.address);
  Shard& s = shard_of(h);
  std::lock_guard<SpinLock> lock(s.mutex);
  std::size_t i = home(s, h, a.address);
  while (s.slots[i].address != 0) {
    if (s.slots[i].address == a.address) {
      if (replaced != nullptr) *replaced = s.slots[i];
      add_path_bytes(s, s.slots[i].path, -s.slots[i].bytes);
      add_path_bytes(s, a.path, a.bytes);
      s.slots[i] = a;
      return InsertResult::kReplaced;
    }
    i = (i + 1) & s.mask;
  }
  if (s.used >= s.limit) return InsertResult::kFull;
  s.slots[i] = a;
  ++s.used;
  add_path_bytes(s, a.path, a.bytes);
  return InsertResult::kInserted;
}

inline bool LiveAllocationTable::erase(std::uintptr_t address, LiveAllocation* removed) {
  const std::uint64_t h = mix(address);
  Shard& s = shard_of(h);
  std::lock_guard<SpinLock> lock(s.mutex);
  for (std::size_t i = home(s, h, address); s.slots[i].address != 0; i = (i + 1) & s.mask) {
    if (s.slots[i].address == address) {
      if (removed != nullptr) *removed = s.slots[i];
      add_path_bytes(s, s.slots[i].path, -s.slots[i].bytes);
      if (s.slots[(i + 1) & s.mask].address == 0) {
        // The probe run ends here (the common case): nothing to shift back.
        s.slots[i] = LiveAllocation{};
        --s.used;
      } else {
        remove_at(s, i);
      }
      return true;
    }
  }
  return false;
}

}  // namespace regiontrace::memory
