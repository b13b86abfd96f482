// Region id -> the sinks that want it, plus per-family interest masks.
//
// Built once per start-up; afterwards only appended to (a new region gets its
// mask before its id is handed out), and swapped for a larger copy when the
// region count outgrows it. Readers on the hot path never lock.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "regiontrace/detail/region_stack.hpp"
#include "regiontrace/sdk/events.hpp"
#include "sink_slot.hpp"

namespace regiontrace::detail {

class RoutingTable : public RegionRouting {
 public:
  RoutingTable(std::vector<SinkSlot*> slots, std::size_t capacity, std::uint32_t generation);

  std::uint64_t region_mask(RegionId id) const {
    return id < capacity ? masks_[id].load(std::memory_order_relaxed) : 0;
  }
  void set_region_mask(RegionId id, std::uint64_t mask) {
    masks_[id].store(mask, std::memory_order_relaxed);
  }
  // The registry's name (its storage outlives every table).
  void set_region_name(RegionId id, std::string_view name) { names_[id] = name; }
  std::size_t region_capacity() const { return capacity; }
  std::unique_ptr<RoutingTable> grown(std::size_t capacity) const;

  const std::vector<SinkSlot*>& slots() const { return slots_; }
  std::uint32_t generation() const { return RegionRouting::generation; }

  // unfiltered_mask (RegionRouting): sinks with no region filter; they also
  // see marks and tensors outside every region.
  std::uint64_t mark_mask = 0;
  std::uint64_t step_mask = 0;
  std::uint64_t tensor_mask = 0;
  std::uint64_t op_mask = 0;
  std::uint64_t snapshot_mask = 0;
  std::uint64_t region_event_mask = 0;  // want on_region_begin/end
  // span_mask (RegionRouting): sinks that want spans (on_spans) instead.
  std::uint64_t time_mask = 0;   // want time_ns filled in
  std::uint64_t flush_mask = 0;  // flight recorders (kInterestPeriodicFlush)
  // track_entered (RegionRouting): entering a selected region is noted,
  // for the shutdown report; entered[id] says it was under this table.
  void note_entered(RegionId id) const { entered_[id].store(1, std::memory_order_relaxed); }

 private:
  std::vector<SinkSlot*> slots_;
  std::unique_ptr<std::atomic<std::uint64_t>[]> masks_;   // RegionRouting::masks
  std::unique_ptr<std::atomic<std::uint8_t>[]> entered_;  // RegionRouting::entered
  std::unique_ptr<std::string_view[]> names_;             // RegionRouting::names
};

}  // namespace regiontrace::detail
