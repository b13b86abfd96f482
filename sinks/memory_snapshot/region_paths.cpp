#include "region_paths.hpp"

#include <algorithm>
#include <utility>

#include "idle_pool.hpp"
#include "regiontrace/sdk/json_writer.hpp"

namespace regiontrace::memory {

RegionPaths& RegionPaths::acquire(std::size_t capacity) {
  const std::size_t wanted = std::max<std::size_t>(capacity, 2);
  RegionPaths* paths = IdlePool<RegionPaths>::instance().take(
      [&](const RegionPaths* p) { return p->capacity_ == wanted; });
  if (paths == nullptr) return *new RegionPaths(wanted);
  // Also what calls from the closed instance added after recycle().
  paths->reset_counters();
  return *paths;
}

void RegionPaths::recycle(RegionPaths& paths) {
  paths.reset_counters();
  IdlePool<RegionPaths>::instance().put(&paths);
}

void RegionPaths::reset_counters() {
  const int n = size();
  for (int i = 0; i < n; ++i) {
    entries_[i].net_bytes.store(0, std::memory_order_relaxed);
  }
  overflowed_.store(false, std::memory_order_relaxed);
}

RegionPaths::RegionPaths(std::size_t capacity)
    : capacity_(std::max<std::size_t>(capacity, 2)),
      entries_(std::make_unique<Entry[]>(capacity_)) {
  set(kOutside, "(outside regions)", "(outside regions)");
  set(kOverflow, "(other paths)", "(other paths)");
  size_.store(2, std::memory_order_release);
}

void RegionPaths::set(int index, std::string path, std::string name) {
  Entry& e = entries_[index];
  e.path_json.clear();
  json::append_escaped(e.path_json, path);
  e.name_json.clear();
  json::append_escaped(e.name_json, name);
  e.path = std::move(path);
  e.name = std::move(name);
}

int RegionPaths::intern(std::string_view path, std::string_view name) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::string key(path);
  auto it = index_.find(key);
  if (it != index_.end()) return it->second;
  const int n = size_.load(std::memory_order_relaxed);
  if (static_cast<std::size_t>(n) >= capacity_) {
    overflowed_.store(true, std::memory_order_relaxed);
    return kOverflow;
  }
  set(n, key, std::string(name));
  index_.emplace(std::move(key), n);
  size_.store(n + 1, std::memory_order_release);
  return n;
}

}  // namespace regiontrace::memory
