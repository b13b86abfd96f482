// A counter track (ph C) cut to a bounded number of samples: time in slices
// that double in width whenever there are more than `slices` of them, the
// highest sample of each kept. Memory traces write their samples in the
// order regions ended, not in time order, and may hold millions; the peaks
// are what a reader of memory looks for, so they are what survives.
#pragma once

#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <vector>

namespace regiontrace::cli {

class CounterEnvelope {
 public:
  explicit CounterEnvelope(std::size_t slices) : limit_(slices < 2 ? 2 : slices) {}

  // A value that is no finite number, or a time too far from the first to
  // subtract (a hostile file), is left out.
  void add(std::int64_t ns, double value) {
    if (!std::isfinite(value)) return;
    if (!origin_) origin_ = ns;
    std::int64_t offset = 0;
    if (__builtin_sub_overflow(ns, *origin_, &offset)) return;
    keep(slots_, slot_of(offset, width_), ns, value);
    while (slots_.size() > limit_) coarsen();
  }

  // In time order.
  std::vector<std::pair<std::int64_t, double>> samples() const {
    std::vector<std::pair<std::int64_t, double>> out;
    out.reserve(slots_.size());
    for (const auto& [slot, sample] : slots_) out.push_back(sample);
    return out;
  }

 private:
  using Slots = std::map<std::int64_t, std::pair<std::int64_t, double>>;

  static std::int64_t slot_of(std::int64_t offset, std::int64_t width) {
    return offset >= 0 ? offset / width : -((-offset + width - 1) / width);
  }

  static void keep(Slots& slots, std::int64_t slot, std::int64_t ns, double value) {
    auto [it, fresh] = slots.try_emplace(slot, ns, value);
    if (!fresh && value > it->second.second) it->second = {ns, value};
  }

  void coarsen() {
    width_ *= 2;
    Slots wider;
    for (const auto& [slot, sample] : slots_) {
      keep(wider, slot_of(sample.first - *origin_, width_), sample.first, sample.second);
    }
    slots_ = std::move(wider);
  }

  std::size_t limit_;
  std::optional<std::int64_t> origin_;
  std::int64_t width_ = 1;  // ns
  Slots slots_;
};

}  // namespace regiontrace::cli
