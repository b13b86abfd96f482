// Dispatcher, lifecycle: start, stop, fork, and routing each region to the
// sinks that select it (on start, and for every region registered while
// running). Also what happens to a sink that throws.
#include <set>
#include <string>
#include <vector>

#include "dispatcher.hpp"
#include "logger.hpp"
#include "region_registry.hpp"
#include "suggest.hpp"

namespace regiontrace::detail {

Dispatcher::Dispatcher() : registry_(&RegionRegistry::instance()) {}

void Dispatcher::fail(SinkSlot& slot, const char* callback, const char* what) {
  if (slot.failed.exchange(true)) return;
  // No lock: this may run inside start() (on_region_routed) which holds it.
  const std::uint64_t bit = std::uint64_t{1} << slot.index;
  enabled_.fetch_and(~bit);
  live_.fetch_and(~bit);
  log(LogLevel::kError, "sink `" + slot.name + "` threw from " + callback + ": " + what +
                            "; it is switched off, the other sinks go on");
  try {
    slot.sink->flush();
    slot.sink->close();
  } catch (...) {
    log(LogLevel::kError, "sink `" + slot.name + "` also failed to close");
  }
}

void Dispatcher::event_sink_threw(const RoutingTable& table, const char* callback,
                                  const char* what) {
  const auto index = static_cast<std::size_t>(__builtin_ctzll(table.event_sink_bit));
  fail(*table.slots()[index], callback, what);
}

void Dispatcher::recompute_live_locked() {
  const RoutingTable* t = table_.load(std::memory_order_relaxed);
  std::uint64_t live = 0;
  if (t != nullptr) {
    const std::int64_t s = step_.load(std::memory_order_relaxed);
    for (const SinkSlot* slot : t->slots()) {
      if (slot->steps.contains(s)) live |= std::uint64_t{1} << slot->index;
    }
  }
  live_.store(live & enabled_.load(std::memory_order_relaxed), std::memory_order_relaxed);
}

void Dispatcher::route_region(RoutingTable& table, const RegionEntry& entry) {
  std::uint64_t mask = 0;
  for (SinkSlot* slot : table.slots()) {
    if (slot->regions.matches(entry.name)) mask |= std::uint64_t{1} << slot->index;
  }
  // The name first: the inline event path reads it once the mask is set.
  table.set_region_name(entry.id, entry.name);
  table.set_region_mask(entry.id, mask);
  const RegionInfo info{entry.id, entry.name, entry.description, entry.color};
  deliver(table, mask & enabled_.load(), "on_region_routed",
          [&](Sink& s) { s.on_region_routed(info); });
}

void Dispatcher::route_new_region(const RegionEntry& entry) {
  // Runs under the registry lock, so tables only change here and in start/stop.
  RoutingTable* t = tables_.empty() ? nullptr : tables_.back().get();
  if (t == nullptr || table_.load() != t) return;
  if (entry.id >= t->region_capacity()) {
    tables_.push_back(t->grown(std::max<std::size_t>(t->region_capacity() * 2, entry.id + 1)));
    t = tables_.back().get();
  }
  route_region(*t, entry);
  publish(t);
}

void Dispatcher::start(std::vector<std::unique_ptr<SinkSlot>> slots) {
  RegionRegistry& registry = RegionRegistry::instance();
  std::lock_guard<std::mutex> registry_lock(registry.mutex());
  std::lock_guard<std::mutex> lock(control_mutex_);
  std::vector<SinkSlot*> raw;
  std::uint64_t enabled = 0;
  for (auto& s : slots) {
    raw.push_back(s.get());
    enabled |= std::uint64_t{1} << s->index;
  }
  const std::uint32_t generation = generation_.fetch_add(1) + 1;
  const std::size_t capacity = std::max<std::size_t>(256, registry.size() * 2);
  tables_.push_back(std::make_unique<RoutingTable>(std::move(raw), capacity, generation));
  RoutingTable* t = tables_.back().get();
  t->live = &live_;
  t->enabled = &enabled_;
  t->step = &step_;
  settle_clock();
  slots_ = std::move(slots);
  enabled_.store(enabled);
  for (std::size_t i = 0; i < registry.size(); ++i) {
    route_region(*t, registry.entry(static_cast<RegionId>(i)));
  }
  registry.set_new_region_hook([this](const RegionEntry& e) { route_new_region(e); });
  publish(t);
  recompute_live_locked();
  if (t->op_mask != 0 && op_observer_switch_ != nullptr) {
    op_observer_switch_(true);
    op_observer_on_ = true;
  }
}

void Dispatcher::report_awaited_never_entered(const RoutingTable& table) {
  // A few by name; a profile that lists thousands gets one line for the rest.
  constexpr std::size_t kNamed = 5;
  std::set<std::string> reported;
  std::size_t unnamed = 0;
  std::string unnamed_origin;
  // A misspelt custom region is only known to be one now: the nearest name
  // the process has met (regions that ran, selected or not, and the
  // catalogs') is the likely intent.
  std::vector<std::string> known;
  const auto nearest_known = [&](const std::string& name) {
    if (known.empty()) {
      for (std::size_t i = 0; i < registry_->size(); ++i) {
        known.push_back(registry_->entry(static_cast<RegionId>(i)).name);
      }
    }
    std::vector<std::string> others;
    for (const std::string& k : known) {
      if (k != name) others.push_back(k);
    }
    return did_you_mean(name, others);
  };
  for (const SinkSlot* slot : table.slots()) {
    for (const std::string& name : slot->regions.awaited()) {
      const auto id = registry_->find(name);
      if (id && registry_->entry(*id).entered_generation.load() == table.generation()) continue;
      if (!reported.insert(name).second) continue;
      if (reported.size() > kNamed) {
        if (unnamed++ == 0) unnamed_origin = slot->regions.origin();
        continue;
      }
      log(LogLevel::kWarn, "region `" + name + "` was selected (" + slot->regions.origin() +
                               ") but never entered: no region of that name ran while the "
                               "sinks were on" +
                               nearest_known(name));
    }
  }
  if (unnamed > 0) {
    log(LogLevel::kWarn, std::to_string(unnamed) + " more selected region" +
                             (unnamed == 1 ? " was" : "s were") + " never entered either (" +
                             unnamed_origin + (unnamed == 1 ? "" : " and others") +
                             "); `regiontrace check` lists the whole selection");
  }
}

void Dispatcher::flush_sinks() {
  std::lock_guard<std::mutex> lock(flush_mutex_);
  flush_locked(~std::uint64_t{0});
}

void Dispatcher::flush_flight_recorders() {
  std::lock_guard<std::mutex> lock(flush_mutex_);
  const RoutingTable* t = table_.load(std::memory_order_acquire);
  if (t != nullptr) flush_locked(t->flush_mask);
}

void Dispatcher::flush_locked(std::uint64_t mask) {
  // stop() publishes no table before it takes flush_mutex_ to close the
  // sinks: a table read here stays running until this returns.
  const RoutingTable* t = table_.load(std::memory_order_acquire);
  if (t == nullptr) return;
  const std::uint64_t enabled = enabled_.load(std::memory_order_relaxed);
  // Every span sink gets the spans taken from the buffers, flushed or not.
  if (t->span_mask != 0) collect_spans(*t, enabled, t->flush_mask & mask);
  for (SinkSlot* slot : t->slots()) {
    if (((mask >> slot->index) & 1) == 0 || slot->failed.load()) continue;
    try {
      slot->sink->flush();
    } catch (const std::exception& e) {
      fail(*slot, "flush", e.what());
    } catch (...) {
      fail(*slot, "flush", "an unknown exception");
    }
  }
}

void Dispatcher::stop() {
  if (const RoutingTable* t = table_.load(std::memory_order_acquire)) {
    report_awaited_never_entered(*t);
  }
  std::vector<std::unique_ptr<SinkSlot>> stopping;
  const RoutingTable* stopped = nullptr;
  std::uint64_t stopped_enabled = 0;
  {
    RegionRegistry& registry = RegionRegistry::instance();
    std::lock_guard<std::mutex> registry_lock(registry.mutex());
    std::lock_guard<std::mutex> lock(control_mutex_);
    if (table_.load() == nullptr) return;
    registry.set_new_region_hook(nullptr);
    stopped = table_.load();
    stopped_enabled = enabled_.load();
    publish(nullptr);
    enabled_.store(0);
    live_.store(0);
    stopping = std::move(slots_);
    slots_.clear();
    if (op_observer_on_ && op_observer_switch_ != nullptr) op_observer_switch_(false);
    op_observer_on_ = false;
  }
  // A flush under way ends before the sinks close.
  std::unique_lock<std::mutex> flushing(flush_mutex_);
  // Spans the threads still hold, before their sinks close.
  if (stopped != nullptr && stopped->span_mask != 0) {
    collect_spans(*stopped, stopped_enabled, stopped->span_mask);
  }
  for (auto& slot : stopping) {
    if (slot->failed.load()) continue;
    try {
      slot->sink->flush();
      slot->sink->close();
    } catch (const std::exception& e) {
      log(LogLevel::kError, "sink `" + slot->name + "` failed while closing: " + e.what());
    } catch (...) {
      log(LogLevel::kError, "sink `" + slot->name + "` failed while closing");
    }
  }
  flushing.unlock();
  std::lock_guard<std::mutex> lock(control_mutex_);
  for (auto& slot : stopping) retired_slots_.push_back(std::move(slot));
}

void Dispatcher::abandon_after_fork() {
  // Only this thread survives the fork; locks held by others are gone with
  // them, so nothing here may lock. The sinks' buffers and files belong to
  // the parent: leave them alone.
  publish(nullptr);
  enabled_.store(0);
  live_.store(0);
  new (&control_mutex_) std::mutex();
  new (&flush_mutex_) std::mutex();
  for (auto& slot : slots_) slot.release();  // NOLINT: intentionally leaked
  slots_.clear();
  op_observer_on_ = false;
  forget_spans_after_fork();
}

std::vector<const SinkSlot*> Dispatcher::running_slots() const {
  std::vector<const SinkSlot*> out;
  const RoutingTable* t = table_.load(std::memory_order_acquire);
  if (t == nullptr) return out;
  for (const SinkSlot* s : t->slots()) out.push_back(s);
  return out;
}

void Dispatcher::set_op_observer_switch(void (*fn)(bool on)) {
  std::lock_guard<std::mutex> lock(control_mutex_);
  op_observer_switch_ = fn;
  const RoutingTable* t = table_.load();
  if (fn != nullptr && t != nullptr && t->op_mask != 0 && !op_observer_on_) {
    fn(true);
    op_observer_on_ = true;
  }
}

}  // namespace regiontrace::detail
