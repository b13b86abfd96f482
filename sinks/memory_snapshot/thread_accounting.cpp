#include "thread_accounting.hpp"

#include <algorithm>
#include <functional>

namespace regiontrace::memory {

void ThreadAccounting::open(RegionId id, int path, std::int64_t step, std::int64_t time_ns,
                            const MemoryCounters& counters, bool stood_aside) {
  if (depth_ == frames_.size()) frames_.emplace_back();
  Frame& f = frames_[depth_++];
  f.id = id;
  f.path = path;
  f.step = step;
  f.start_ns = time_ns;
  f.stood_aside = stood_aside;
  f.heard_at_open = heard_.load(std::memory_order_relaxed);
  f.children_net = 0;
  f.devices = counters.seen();
  for_each_device(f.devices, [&](int d) {
    const std::int64_t now = counters.current(d);
    f.entry[d] = now;
    // A locked exchange only when the running peak moves: a peak raised
    // by another thread after this load lands in the new region, as if the
    // exchange had run at the load.
    std::int64_t saved = peak_[d].load(std::memory_order_relaxed);
    if (saved != now) saved = peak_[d].exchange(now, std::memory_order_relaxed);
    f.saved_peak[d] = saved;
  });
  current_path.store(path, std::memory_order_relaxed);
}

bool ThreadAccounting::close(RegionId id, const MemoryCounters& counters, bool stood_aside,
                             ClosedRegion* out) {
  std::size_t index = depth_;
  while (index > 0 && frames_[index - 1].id != id) --index;
  if (index == 0) return false;
  // The host ends regions innermost first; anything above `id` was opened
  // before the sink saw its begin and is dropped with it.
  depth_ = index;
  const Frame& f = frames_[depth_ - 1];
  out->path = f.path;
  out->step = f.step;
  out->start_ns = f.start_ns;
  out->stood_aside = f.stood_aside || stood_aside;
  out->unmeasured = out->stood_aside && heard_.load(std::memory_order_relaxed) == f.heard_at_open;
  std::int64_t net = 0;
  for_each_device(counters.seen(), [&](int d) {
    const bool known_at_entry = (f.devices >> d) & 1u;
    DeviceFigures figures;
    figures.device = d;
    figures.entry = known_at_entry ? f.entry[d] : 0;
    figures.exit = counters.current(d);
    const std::int64_t running = peak_[d].load(std::memory_order_relaxed);
    figures.peak = std::max({running, figures.entry, figures.exit});
    out->devices.push_back(figures);
    net += figures.exit - figures.entry;
    // Fold this region's peak back into the enclosing one's.
    const std::int64_t saved = known_at_entry ? f.saved_peak[d] : 0;
    peak_[d].store(std::max(saved, figures.peak), std::memory_order_relaxed);
  });
  out->exclusive_net = net - f.children_net;
  --depth_;
  if (depth_ > 0) {
    Frame& parent = frames_[depth_ - 1];
    parent.children_net += net;
    // The enclosing region's figures miss what this one did not see either.
    if (out->stood_aside) parent.stood_aside = true;
    current_path.store(parent.path, std::memory_order_relaxed);
  } else {
    current_path.store(RegionPaths::kOutside, std::memory_order_relaxed);
  }
  return true;
}

int ThreadAccounting::cached_path(std::string_view path, std::string_view name,
                                  RegionPaths& paths) {
  if (last_index_ != RegionPaths::kOutside && path == last_path_) return last_index_;
  const std::uint64_t h = std::hash<std::string_view>{}(path);
  auto it = path_cache_.find(h);
  int index;
  if (it != path_cache_.end() &&
      (it->second == RegionPaths::kOverflow || paths.path(it->second) == path)) {
    index = it->second;
  } else {
    index = paths.intern(path, name);
    if (it == path_cache_.end()) path_cache_.emplace(h, index);
  }
  last_path_.assign(path);
  last_index_ = index;
  return index;
}

void ThreadAccounting::release() {
  reporter.reset();
  std::unordered_map<std::uint64_t, int>().swap(path_cache_);
  std::string().swap(last_path_);
  last_index_ = RegionPaths::kOutside;
  std::vector<Frame>().swap(frames_);
  depth_ = 0;
}

}  // namespace regiontrace::memory
