// Per-thread state for a sink, found by the host's thread number (the
// `thread_id` of every event: small, never reused within a process) with two
// dependent loads and no lock. A sink is a plugin loaded with dlopen, where a
// thread_local costs a call to __tls_get_addr on every access; this is the
// table a sink uses instead. Header-only.
//
//   struct MyThread : sdk::ThreadIdentity { std::vector<Frame> open; };
//   sdk::ThreadTable<MyThread> threads_;
//   MyThread* t = threads_.find(e.thread_id);
//   if (t == nullptr) t = threads_.create(e.thread_id, sdk::this_thread_os_tid());
//
// Entries are created under a lock and then read without one; a thread's
// entry is changed by that thread (or under the sink's own lock). Entries
// live until the table goes or remove() takes them, so a pointer found by
// another thread (a sink's writer reading every thread) stays valid while
// that thread holds the table's all() snapshot and nobody removes.
#pragma once

#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <fstream>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace regiontrace::sdk {

// Who a thread is, the same in every sink's output.
struct ThreadIdentity {
  std::uint64_t number = 0;  // the host's thread number (events' thread_id)
  std::uint64_t index = 0;   // creation order in its table, from 0
  long os_tid = 0;           // the Linux thread id
  std::string name;          // thread_name(os_tid) when the entry was made
};

// The calling thread's Linux id.
inline long this_thread_os_tid() {
  return static_cast<long>(::syscall(SYS_gettid));
}

// The one rule for a thread's name: what the thread set (prctl /
// pthread_setname_np, as /proc shows it), else "thread <tid>". Readable from
// any thread, for a sink that meets a thread's records on another. Viewers
// show the tid beside the name, so it is not repeated in it.
inline std::string thread_name(long os_tid) {
  std::ifstream comm("/proc/self/task/" + std::to_string(os_tid) + "/comm");
  std::string name;
  if (std::getline(comm, name) && !name.empty()) return name;
  return "thread " + std::to_string(os_tid);
}

template <typename T>
class ThreadTable {
  static_assert(std::is_base_of_v<ThreadIdentity, T>, "T derives from sdk::ThreadIdentity");

 public:
  static constexpr std::uint64_t kPageBits = 10;
  static constexpr std::uint64_t kPages = std::uint64_t{1} << 13;  // 8M thread numbers

  ThreadTable() : pages_(map_directory()) {}
  ~ThreadTable() { ::munmap(pages_, kDirectoryBytes); }
  ThreadTable(const ThreadTable&) = delete;
  ThreadTable& operator=(const ThreadTable&) = delete;

  // The entry for thread `number`, or null: none yet, or past the table.
  // The first 1024 thread numbers (most programs' every thread) are one load
  // from the table itself; later ones go through the page directory.
  T* find(std::uint64_t number) const {
    if (number < kPageSize) return first_[number].load(std::memory_order_acquire);
    const std::uint64_t page = number >> kPageBits;
    if (page >= kPages) return nullptr;
    const std::atomic<T*>* p = __atomic_load_n(&pages_[page], __ATOMIC_ACQUIRE);
    return p == nullptr ? nullptr : p[number & kPageMask].load(std::memory_order_acquire);
  }

  // The entry for thread `number` (Linux thread `os_tid`), made with
  // `args` if there is none; null past the table's size (8M threads).
  template <typename... Args>
  T* create(std::uint64_t number, long os_tid, Args&&... args) {
    const std::uint64_t page = number >> kPageBits;
    if (page >= kPages) return nullptr;
    std::lock_guard<std::mutex> lock(mutex_);
    std::atomic<T*>& entry = slot_locked(number);
    if (T* existing = entry.load(std::memory_order_relaxed)) return existing;
    auto made = std::make_unique<T>(std::forward<Args>(args)...);
    made->number = number;
    made->index = next_index_++;
    made->os_tid = os_tid;
    made->name = thread_name(os_tid);
    entries_.push_back(std::move(made));
    entry.store(entries_.back().get(), std::memory_order_release);
    return entries_.back().get();
  }

  // Takes thread `number`'s entry out (null if none). Only when no other
  // thread can be using it: e.g. on that thread, as it exits.
  std::unique_ptr<T> remove(std::uint64_t number) {
    const std::uint64_t page = number >> kPageBits;
    if (page >= kPages) return nullptr;
    std::lock_guard<std::mutex> lock(mutex_);
    T* raw = slot_locked(number).exchange(nullptr, std::memory_order_acq_rel);
    if (raw == nullptr) return nullptr;
    auto it = std::find_if(entries_.begin(), entries_.end(),
                           [raw](const std::unique_ptr<T>& e) { return e.get() == raw; });
    std::unique_ptr<T> out = std::move(*it);
    entries_.erase(it);
    return out;
  }

  // Every entry, in the order they were made.
  std::vector<T*> all() const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<T*> out;
    out.reserve(entries_.size());
    for (const auto& e : entries_) out.push_back(e.get());
    return out;
  }
  std::size_t size() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return entries_.size();
  }

 private:
  // A directory entry: a plain pointer in the mapping, read and written
  // with the compiler's atomic builtins, so the all-zero mapping needs no
  // construction (a std::atomic array's would write every entry in C++20).
  using PageEntry = std::atomic<T*>*;
  static constexpr std::size_t kPageSize = std::size_t{1} << kPageBits;
  static constexpr std::uint64_t kPageMask = kPageSize - 1;
  static constexpr std::size_t kDirectoryBytes = kPages * sizeof(PageEntry);

  // The page directory is an anonymous mapping: all-zero (null) pages that
  // cost nothing until a thread number reaches them, so a sink instance, which
  // the host keeps after shutdown, holds one resident page of it, not 64 KiB.
  static PageEntry* map_directory() {
    void* p = ::mmap(nullptr, kDirectoryBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                     -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    return static_cast<PageEntry*>(p);
  }

  // The entry of thread `number` (within the table), its page made if need be.
  std::atomic<T*>& slot_locked(std::uint64_t number) {
    if (number < kPageSize) return first_[number];
    const std::uint64_t page = number >> kPageBits;
    std::atomic<T*>* p = pages_[page];  // written under mutex_ only
    if (p == nullptr) {
      page_storage_.emplace_back(new std::atomic<T*>[kPageSize]);
      p = page_storage_.back().get();
      for (std::size_t i = 0; i < kPageSize; ++i) p[i].store(nullptr, std::memory_order_relaxed);
      __atomic_store_n(&pages_[page], p, __ATOMIC_RELEASE);
    }
    return p[number & kPageMask];
  }

  mutable std::mutex mutex_;
  std::atomic<T*> first_[kPageSize] = {};  // thread numbers below kPageSize
  PageEntry* pages_;                       // kPages entries, mapped; page 0 unused
  std::vector<std::unique_ptr<T>> entries_;
  std::vector<std::unique_ptr<std::atomic<T*>[]>> page_storage_;
  std::uint64_t next_index_ = 0;
};

}  // namespace regiontrace::sdk
