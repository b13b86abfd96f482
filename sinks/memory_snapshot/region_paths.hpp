// Region paths ("train/step/forward") as small stable indices, with the
// bytes each path added (without tracking; with it, the live-allocation
// table keeps what each path holds). Allocations are attributed to the innermost
// selected region open on the allocating thread, so a parent's figures never
// include what its children hold: a leak shows up in one path only.
//
// Append-only storage of fixed capacity: an index handed out stays valid and
// its strings never move, so the writer thread and the allocation hot path
// read entries without a lock. Index 0 is "outside every selected region",
// index 1 collects paths beyond the capacity (counted, reported).
//
// Kept for the process: the sink never frees one (a region event racing
// close() may still read its strings), so a closed instance hands its table
// to a process-wide pool (recycle()) and the next instance continues with it
// (acquire()): interned paths keep their index, the byte counters and the
// overflow flag start again from zero. The capacity is therefore shared by
// all instances of a process (distinct paths, over every init()/shutdown()).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace regiontrace::memory {

class RegionPaths {
 public:
  static constexpr int kOutside = 0;
  static constexpr int kOverflow = 1;

  explicit RegionPaths(std::size_t capacity);
  RegionPaths(const RegionPaths&) = delete;
  RegionPaths& operator=(const RegionPaths&) = delete;

  // For a sink instance: a pooled table of this capacity (counters at
  // zero), or a new one. Never deleted; give it back with recycle().
  static RegionPaths& acquire(std::size_t capacity);
  static void recycle(RegionPaths& paths);

  // Thread-safe; a mutex and a hash lookup: callers cache the result.
  int intern(std::string_view path, std::string_view name);

  int size() const { return size_.load(std::memory_order_acquire); }
  const std::string& path(int index) const { return entries_[index].path; }
  const std::string& name(int index) const { return entries_[index].name; }
  // The same as JSON strings (quoted, escaped), made once per path: the
  // writer puts them in every record.
  const std::string& path_json(int index) const { return entries_[index].path_json; }
  const std::string& name_json(int index) const { return entries_[index].name_json; }
  bool overflowed() const { return overflowed_.load(std::memory_order_relaxed); }

  // Without tracking: the running sum of what the path's instances added
  // (exit minus entry, minus what nested selected regions added). Returns the
  // sum after the change.
  std::int64_t add_net(int index, std::int64_t bytes) {
    // Most regions leave the bytes as they were: a load, not a locked add.
    std::atomic<std::int64_t>& net = entries_[index].net_bytes;
    if (bytes == 0) return net.load(std::memory_order_relaxed);
    return net.fetch_add(bytes, std::memory_order_relaxed) + bytes;
  }

 private:
  // A cache line (or two) each: threads allocating in different paths do
  // not contend on one line.
  struct alignas(64) Entry {
    std::string path;
    std::string name;
    std::string path_json;
    std::string name_json;
    std::atomic<std::int64_t> net_bytes{0};
  };

  const std::size_t capacity_;
  std::unique_ptr<Entry[]> entries_;
  std::atomic<int> size_{0};
  std::atomic<bool> overflowed_{false};
  std::mutex mutex_;
  std::unordered_map<std::string, int> index_;

  void set(int index, std::string path, std::string name);
  void reset_counters();
};

}  // namespace regiontrace::memory
