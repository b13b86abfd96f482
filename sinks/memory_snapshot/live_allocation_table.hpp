// The live libtorch allocations (track_allocations: true): address, size,
// the region path that allocated it and the step, so a snapshot can say
// which regions own the memory that is still alive.
//
// Bounded: at most `max_entries` allocations are kept; an insert beyond that
// fails and the caller counts it (overflow), nothing grows behind the user's
// back. Open addressing behind one spin lock: an insert or erase is one
// short lock and a probe of a few slots, with no heap allocation after
// construction. Robin Hood linear probing (an insert takes the slot of an
// entry nearer its home than the newcomer is), so that every probe run is
// ordered by home slot: a lookup stops at the first entry nearer its home
// than the probe, and an erase shifts back only the displaced entries after
// the hole, stopping at the first one at its home. Plain linear probing
// scanned the whole run on every erase: the rest of a packed page's
// entries, and more.
//
// One lock, not shards: libtorch already serialises CPU allocations under
// its reporter's mutex and each CUDA device's under its caching allocator's,
// so more locks bought little, and one lets the caller do its other per-event
// bookkeeping under it (insert()/erase()'s `locked` callback: the sink's
// running CPU byte count) with plain stores instead of a second locked
// instruction per event (about 9 ns of the ~30 the sink added per tracked
// alloc + free). The table also keeps the bytes each region path holds
// (live_bytes()), under the same lock.
//
// Where an address goes keeps the allocator's locality: a hash of its 4 kB
// page picks a window of the table, its 64-byte line within the page (c10
// aligns allocations to 64 bytes) a slot in the window, every eighth one.
// Allocators hand out addresses that march through a page, so the probes
// march through the table in steps the hardware prefetcher follows; a hash
// of the whole address sent every insert to a cold line (a cache miss that
// was most of the cost of tracking, the benchmark's 1.6x). The spacing of
// eight keeps a page packed with 64-byte allocations (a slab allocator) at
// one slot in eight of its window, so overlapping windows interleave
// instead of forming long runs. regiontrace_memory_snapshot_bench measures
// the table alone per pattern (packed, a march, random addresses).
//
// Memory: the slots are one anonymous mapping (on huge pages where the
// kernel grants them: hashed pages are spread over the whole table, so with
// 4 kB pages nearly every new window missed the TLB), so pages nobody
// touched cost nothing, and clear() gives every page back
// (madvise(MADV_DONTNEED)) while the mapping stays: an insert or erase
// racing it still finds valid (zero-filled, that is empty) slots. The sink
// never deletes a table either: a closed instance hands its table to a
// process-wide pool (recycle()), and the next instance with the same bound
// takes it from there (acquire()), so init()/shutdown() cycles reuse one
// table instead of leaking one each.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
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
  // lock live on; what they insert is cleared again at the next acquire().
  static void recycle(LiveAllocationTable& table);
  // Empties the table and returns its pages to the system. Any thread.
  void clear();

  // `locked()` runs under the table's lock first, whatever the outcome:
  // every insert and erase is serialised with every other one.
  template <typename Locked>
  InsertResult insert(const LiveAllocation& a, LiveAllocation* replaced, Locked&& locked);
  InsertResult insert(const LiveAllocation& a, LiveAllocation* replaced) {
    return insert(a, replaced, [] {});
  }
  // False when the address is not tracked (allocated before tracking
  // started, or not kept because the table was full).
  template <typename Locked>
  bool erase(std::uintptr_t address, LiveAllocation* removed, Locked&& locked);
  bool erase(std::uintptr_t address, LiveAllocation* removed) {
    return erase(address, removed, [] {});
  }

  // Bytes of the live allocations made in `path`. Any thread, no lock: the
  // figure as of the last insert or erase.
  std::int64_t live_bytes(int path) const;

  std::size_t size() const;
  std::size_t max_entries() const { return max_entries_; }
  std::size_t max_paths() const { return max_paths_; }
  // A copy of every live entry, consistent: taken under the lock (a few ms
  // for a full default table, once per snapshot).
  std::vector<LiveAllocation> copy() const;

 private:
  // The page's window, then the line's slot in it.
  std::size_t home(std::uintptr_t address) const {
    std::uint64_t x = static_cast<std::uint64_t>(address) >> 12;
    x ^= x >> 31;
    x *= 0x9E3779B97F4A7C15ull;
    x ^= x >> 29;
    return static_cast<std::size_t>((x >> 8) + 8 * ((address >> 6) & 63)) & mask_;
  }
  // How far slot i's entry sits from its home slot.
  std::size_t distance(std::size_t i) const { return (i - home(slots_[i].address)) & mask_; }
  // Where `address` (home slot `start`) is, or where the probe for it
  // stopped (`*found` false): an empty slot, or the first entry nearer its
  // home than the probe, with the probe's distance then in `*d`.
  std::size_t find(std::uintptr_t address, std::size_t start, bool* found, std::size_t* d) const {
    std::size_t i = start;
    *d = 0;
    for (;;) {
      const std::uintptr_t here = slots_[i].address;
      if (here == address) {
        *found = true;
        return i;
      }
      if (here == 0 || distance(i) < *d) {
        *found = false;
        return i;
      }
      i = (i + 1) & mask_;
      ++*d;
    }
  }
  // Places `a` from slot i (the stop of find(), occupied; probe distance d),
  // moving the entries nearer their homes one slot on.
  void place(LiveAllocation a, std::size_t i, std::size_t d);
  // Fills the hole at slot i from the displaced entries after it.
  void shift_back(std::size_t i);
  // Lock holder.
  void add_path_bytes(std::int32_t path, std::int64_t bytes) {
    if (static_cast<std::size_t>(path) >= max_paths_) return;
    std::atomic<std::int64_t>& b = path_bytes_[path];
    b.store(b.load(std::memory_order_relaxed) + bytes, std::memory_order_relaxed);
  }
  // Lock holder: zero the slots and path figures, giving the pages back.
  void clear_locked();

  const std::size_t max_entries_;
  const std::size_t max_paths_;
  mutable SpinLock mutex_;
  LiveAllocation* slots_ = nullptr;  // in mapping_, page-aligned
  // Bytes per region path held by the entries: written under `mutex_` (a
  // load and a store, no locked instruction), read by anyone.
  std::atomic<std::int64_t>* path_bytes_ = nullptr;  // in mapping_, after the slots
  std::size_t mask_ = 0;
  std::size_t used_ = 0;
  void* mapping_ = nullptr;
  std::size_t mapping_bytes_ = 0;
};

// Inline: called for every allocation event with tracking on.
template <typename Locked>
LiveAllocationTable::InsertResult LiveAllocationTable::insert(const LiveAllocation& a,
                                                              LiveAllocation* replaced,
                                                              Locked&& locked) {
  const std::size_t start = home(a.address);
  std::lock_guard<SpinLock> lock(mutex_);
  locked();
  bool found = false;
  std::size_t d = 0;
  const std::size_t i = find(a.address, start, &found, &d);
  if (found) {
    if (replaced != nullptr) *replaced = slots_[i];
    add_path_bytes(slots_[i].path, -slots_[i].bytes);
    add_path_bytes(a.path, a.bytes);
    slots_[i] = a;
    return InsertResult::kReplaced;
  }
  if (used_ >= max_entries_) return InsertResult::kFull;
  if (slots_[i].address == 0) {
    slots_[i] = a;  // the common case: a free slot, most often the home one
  } else {
    place(a, i, d);
  }
  ++used_;
  add_path_bytes(a.path, a.bytes);
  return InsertResult::kInserted;
}

template <typename Locked>
bool LiveAllocationTable::erase(std::uintptr_t address, LiveAllocation* removed, Locked&& locked) {
  const std::size_t start = home(address);
  std::lock_guard<SpinLock> lock(mutex_);
  locked();
  bool found = false;
  std::size_t d = 0;
  const std::size_t i = find(address, start, &found, &d);
  if (!found) return false;
  if (removed != nullptr) *removed = slots_[i];
  add_path_bytes(slots_[i].path, -slots_[i].bytes);
  if (slots_[(i + 1) & mask_].address == 0) {
    slots_[i] = LiveAllocation{};  // the run ends here (the common case)
  } else {
    shift_back(i);
  }
  --used_;
  return true;
}

}  // namespace regiontrace::memory
