#include "region_paths.hpp"

#include <algorithm>

namespace regiontrace::memory {

RegionPaths::RegionPaths(std::size_t capacity)
    : capacity_(std::max<std::size_t>(capacity, 2)),
      entries_(std::make_unique<Entry[]>(capacity_)) {
  entries_[kOutside].path = "(outside regions)";
  entries_[kOutside].name = "(outside regions)";
  entries_[kOverflow].path = "(other paths)";
  entries_[kOverflow].name = "(other paths)";
  size_.store(2, std::memory_order_release);
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
  entries_[n].path = key;
  entries_[n].name = std::string(name);
  index_.emplace(std::move(key), n);
  size_.store(n + 1, std::memory_order_release);
  return n;
}

}  // namespace regiontrace::memory
