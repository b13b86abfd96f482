// Parts of closed sink instances kept for the next instances. The host never
// deletes a sink and a late callback may still reach what it used, so these
// parts are never freed: a closed instance puts them here and the next one
// with matching bounds takes them back, so init()/shutdown() cycles reuse
// one set instead of leaking one each. One pool per type for the process,
// never destroyed (exit handlers may still close a sink).
#pragma once

#include <algorithm>
#include <mutex>
#include <vector>

namespace regiontrace::memory {

template <typename T>
class IdlePool {
 public:
  static IdlePool& instance() {
    static auto* pool = new IdlePool();
    return *pool;
  }
  // An idle object `matches` accepts, taken out of the pool; null if none.
  template <typename Matches>
  T* take(Matches matches) {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = std::find_if(idle_.begin(), idle_.end(), matches);
    if (it == idle_.end()) return nullptr;
    T* found = *it;
    idle_.erase(it);
    return found;
  }
  void put(T* object) {
    std::lock_guard<std::mutex> lock(mutex_);
    idle_.push_back(object);
  }

 private:
  IdlePool() = default;
  std::mutex mutex_;
  std::vector<T*> idle_;
};

}  // namespace regiontrace::memory
