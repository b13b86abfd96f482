// The process's resident set and its high-water mark.
//
// Per region exit the figures must be cheap: /proc/self/status costs ~5 us to
// generate, so sample() reads VmRSS's source, /proc/self/statm (resident
// pages, through a descriptor kept open), and VmHWM's, getrusage()'s
// ru_maxrss (the kernel's hiwater_rss, the same figure). status() parses
// /proc/self/status itself, for the summary.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>

namespace regiontrace::memory {

struct ResidentMemory {
  std::int64_t rss_bytes = -1;  // -1: could not be read
  std::int64_t hwm_bytes = -1;
};

class ProcessMemory {
 public:
  ProcessMemory();
  ~ProcessMemory();
  ProcessMemory(const ProcessMemory&) = delete;
  ProcessMemory& operator=(const ProcessMemory&) = delete;

  // Any thread.
  ResidentMemory sample() const;
  // sample(), or the last one when it is younger than `max_age_ns` (time on
  // the events' clock). Concurrent callers may both read: harmless.
  ResidentMemory sample_at(std::int64_t now_ns, std::int64_t max_age_ns) const;
  // VmRSS and VmHWM from /proc/self/status.
  static ResidentMemory status();

 private:
  int statm_fd_ = -1;  // shared by every instance of the process, never closed
  mutable std::atomic<std::int64_t> last_ns_{0};
  mutable std::atomic<std::int64_t> last_rss_{-1};
  mutable std::atomic<std::int64_t> last_hwm_{-1};
  pid_t pid_ = 0;  // /proc/self was resolved for this process: not valid after fork
  long page_size_ = 4096;
};

}  // namespace regiontrace::memory
