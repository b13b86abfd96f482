#include "region_paths.hpp"

#include <algorithm>
#include <utility>

#include "regiontrace/sdk/json_writer.hpp"

namespace regiontrace::memory {

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
