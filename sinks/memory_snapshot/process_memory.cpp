#include "process_memory.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace regiontrace::memory {
namespace {

// One descriptor for the process, never closed: sinks are never deleted and
// a region exit racing close() may still read through it, so a descriptor
// per instance would leak one per init()/shutdown() cycle (and closing it
// would let such a read hit whatever file reuses the number). A forked child
// opens its own: the inherited one names the parent's /proc entry.
int shared_statm_fd(pid_t pid) {
  static std::mutex mutex;
  static int fd = -1;
  static pid_t owner = 0;
  std::lock_guard<std::mutex> lock(mutex);
  if (owner != pid) {
    fd = ::open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
    owner = pid;
  }
  return fd;
}

}  // namespace

ProcessMemory::ProcessMemory()
    : statm_fd_(shared_statm_fd(::getpid())),
      pid_(::getpid()),
      page_size_(::sysconf(_SC_PAGESIZE)) {}

ProcessMemory::~ProcessMemory() = default;

ResidentMemory ProcessMemory::sample() const {
  ResidentMemory m;
  if (statm_fd_ >= 0 && ::getpid() == pid_) {
    char buf[128];
    const ssize_t n = ::pread(statm_fd_, buf, sizeof(buf) - 1, 0);
    if (n > 0) {
      buf[n] = '\0';
      // "size resident shared text lib data dt", in pages.
      char* end = nullptr;
      std::strtoll(buf, &end, 10);
      const long long resident = std::strtoll(end, nullptr, 10);
      m.rss_bytes = static_cast<std::int64_t>(resident) * page_size_;
    }
  }
  rusage ru{};
  if (::getrusage(RUSAGE_SELF, &ru) == 0)
    m.hwm_bytes = static_cast<std::int64_t>(ru.ru_maxrss) * 1024;
  // The kernel's RSS counters are summed from per-thread caches, and the two
  // reads see them a moment apart: a mark is never below the level itself.
  if (m.hwm_bytes >= 0 && m.rss_bytes > m.hwm_bytes) m.hwm_bytes = m.rss_bytes;
  return m;
}

ResidentMemory ProcessMemory::sample_at(std::int64_t now_ns, std::int64_t max_age_ns) const {
  if (max_age_ns > 0) {
    const std::int64_t last = last_ns_.load(std::memory_order_acquire);
    if (last != 0 && now_ns - last < max_age_ns) {
      return {last_rss_.load(std::memory_order_relaxed), last_hwm_.load(std::memory_order_relaxed)};
    }
  }
  const ResidentMemory m = sample();
  if (max_age_ns > 0) {
    last_rss_.store(m.rss_bytes, std::memory_order_relaxed);
    last_hwm_.store(m.hwm_bytes, std::memory_order_relaxed);
    last_ns_.store(now_ns, std::memory_order_release);
  }
  return m;
}

ResidentMemory ProcessMemory::status() {
  ResidentMemory m;
  std::FILE* f = std::fopen("/proc/self/status", "re");
  if (f == nullptr) return m;
  char line[256];
  while (std::fgets(line, sizeof(line), f) != nullptr) {
    long long kb = 0;
    if (std::sscanf(line, "VmRSS: %lld kB", &kb) == 1) m.rss_bytes = kb * 1024;
    if (std::sscanf(line, "VmHWM: %lld kB", &kb) == 1) m.hwm_bytes = kb * 1024;
  }
  std::fclose(f);
  return m;
}

}  // namespace regiontrace::memory
