#include "routing_table.hpp"

namespace regiontrace::detail {

RoutingTable::RoutingTable(std::vector<SinkSlot*> slots, std::size_t capacity,
                           std::uint32_t generation)
    : slots_(std::move(slots)),
      masks_(new std::atomic<std::uint64_t>[capacity]),
      entered_(new std::atomic<std::uint8_t>[capacity]),
      names_(new std::string_view[capacity]) {
  RegionRouting::masks = masks_.get();
  RegionRouting::entered = entered_.get();
  RegionRouting::names = names_.get();
  RegionRouting::capacity = capacity;
  RegionRouting::generation = generation;
  for (std::size_t i = 0; i < capacity; ++i) {
    masks_[i].store(0, std::memory_order_relaxed);
    entered_[i].store(0, std::memory_order_relaxed);
  }
  std::uint64_t all = 0;
  for (const SinkSlot* s : slots_) {
    const std::uint64_t bit = std::uint64_t{1} << s->index;
    all |= bit;
    if (s->regions.everything()) unfiltered_mask |= bit;
    if (!s->regions.awaited().empty()) track_entered = true;
    if (s->interests & kInterestMarks) mark_mask |= bit;
    if (s->interests & kInterestSteps) step_mask |= bit;
    if (s->interests & kInterestTensors) tensor_mask |= bit;
    if (s->interests & kInterestOpOutputs) op_mask |= bit;
    if (s->interests & kInterestSnapshots) snapshot_mask |= bit;
    if (s->interests & kInterestPeriodicFlush) flush_mask |= bit;
    // A span sink gets its regions as spans only, always timed.
    if (s->interests & kInterestSpans) {
      span_mask |= bit;
    } else if (s->interests & kInterestRegions) {
      region_event_mask |= bit;
    }
    if (s->interests & (kInterestTimestamps | kInterestSpans)) time_mask |= bit;
  }
  // A region all sinks selected: its frame's `inside` is all sinks.
  if (all != 0 && span_mask == all && !track_entered) span_everything = all;
  // One event sink: a region only it selected gets its events inline.
  if (region_event_mask != 0 && (region_event_mask & (region_event_mask - 1)) == 0) {
    const auto index = static_cast<std::size_t>(__builtin_ctzll(region_event_mask));
    event_sink = slots_[index]->sink;
    event_sink_bit = region_event_mask;
    event_sink_timed = (time_mask & region_event_mask) != 0;
  }
}

std::unique_ptr<RoutingTable> RoutingTable::grown(std::size_t capacity) const {
  auto t = std::make_unique<RoutingTable>(slots_, capacity, generation());
  t->live = live;
  t->enabled = enabled;
  t->step = step;
  for (std::size_t i = 0; i < region_capacity(); ++i) {
    t->set_region_name(static_cast<RegionId>(i), names_[i]);
    t->set_region_mask(static_cast<RegionId>(i), region_mask(static_cast<RegionId>(i)));
  }
  return t;
}

}  // namespace regiontrace::detail
