// A cheap clock that reads CLOCK_MONOTONIC nanoseconds. On this kind of
// machine clock_gettime(CLOCK_MONOTONIC) costs ~23 ns (a VM's vDSO reads the
// TSC and scales it under a sequence lock) and a timed region pair reads it
// twice; rdtsc alone costs ~10 ns. So, as Tracy does, we read the TSC and
// scale it ourselves, calibrated against CLOCK_MONOTONIC, and hand out
// CLOCK_MONOTONIC nanoseconds: stamps from this clock, from clock_gettime
// and from clock_sync's pairs stay comparable, in one process and across
// plugins (each plugin that includes this header calibrates its own copy).
//
// When the TSC is used: x86-64, the CPU says it is invariant (cpuid
// 0x80000007 EDX bit 8: constant rate in every P/C-state), and Linux itself
// keeps time with it (the current clocksource is "tsc": the kernel checked
// that the cores' TSCs agree). Otherwise, or with REGIONTRACE_CLOCK=monotonic,
// every reading is clock_gettime(CLOCK_MONOTONIC).
//
// Calibration and accuracy: the first reading pairs (TSC, CLOCK_MONOTONIC)
// and measures the rate over ~200 us. Re-calibration happens when a reading
// finds the TSC past the next check point (after 1 ms, then twice as long
// each time, at most every 250 ms): it pairs the clocks again and takes the
// rate over the whole baseline since the first pair, so the rate error
// shrinks as the run goes on (a pair is bracketed to ~50 ns, so after 1 s the
// rate is within ~0.1 ppm). The output never steps back: the new segment
// starts at the larger of the old segment's value and the true clock, and
// its slope is chosen to meet CLOCK_MONOTONIC at the next check point. So
// the clock stays within a few microseconds of CLOCK_MONOTONIC (the test
// bounds it at 50 us), including NTP's slewing of CLOCK_MONOTONIC, which a
// re-calibration follows within one interval. A check point costs three
// clock_gettime calls on the thread that passes it.
//
// Header-only, not part of the plugin ABI: nothing here crosses the boundary.
#pragma once

#include <time.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "regiontrace/sdk/clock_segment.hpp"

#if defined(__x86_64__)
#include <cpuid.h>
#include <x86intrin.h>
#define REGIONTRACE_CLOCK_HAS_TSC 1
#else
#define REGIONTRACE_CLOCK_HAS_TSC 0
#endif

namespace regiontrace::sdk::clock {

inline std::int64_t monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// The CPU's promise that the TSC ticks at one rate whatever the core does.
inline bool cpu_tsc_invariant() {
#if REGIONTRACE_CLOCK_HAS_TSC
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid(0x80000000u, &a, &b, &c, &d) == 0 || a < 0x80000007u) return false;
  if (__get_cpuid(0x80000007u, &a, &b, &c, &d) == 0) return false;
  return (d & (1u << 8)) != 0;
#else
  return false;
#endif
}

// Linux's verdict on the TSC: it keeps time with it only when the cores'
// counters agree and do not stop.
inline bool kernel_uses_tsc() {
  std::ifstream f("/sys/devices/system/clocksource/clocksource0/current_clocksource");
  std::string name;
  return static_cast<bool>(f >> name) && name == "tsc";
}

// Whether a clock built now would read the TSC (REGIONTRACE_CLOCK=monotonic
// says no).
inline bool tsc_usable() {
  const char* forced = std::getenv("REGIONTRACE_CLOCK");
  if (forced != nullptr && std::strcmp(forced, "monotonic") == 0) return false;
  return REGIONTRACE_CLOCK_HAS_TSC && cpu_tsc_invariant() && kernel_uses_tsc();
}

class CalibratedClock {
 public:
  enum class Source { kTsc, kMonotonic };

  // Calibrates on the first now_ns(), not here: a process that never reads
  // the clock pays nothing. constexpr, so that a clock at namespace scope is
  // ready before any constructor runs (regions may run in static
  // initialisers). `mirror`, when given, gets every segment the clock
  // starts, for a host that reads the clock inline in other binaries (its
  // readings are then this clock's own); it stays null without the TSC.
  constexpr explicit CalibratedClock(Source wanted = Source::kTsc,
                                     std::atomic<const Segment*>* mirror = nullptr)
      : wanted_(wanted), mirror_(mirror) {}
  CalibratedClock(const CalibratedClock&) = delete;
  CalibratedClock& operator=(const CalibratedClock&) = delete;

  // CLOCK_MONOTONIC nanoseconds.
  std::int64_t now_ns() {
#if REGIONTRACE_CLOCK_HAS_TSC
    const Segment* s = current_.load(std::memory_order_acquire);
    if (__builtin_expect(s != nullptr, 1)) {
      const std::uint64_t t = __rdtsc();
      if (__builtin_expect(t < s->next_check_tsc, 1)) return s->value_at(t);
    }
    return slow_now_ns();
#else
    return monotonic_ns();
#endif
  }

  // After the first now_ns(): whether readings come from the TSC.
  bool uses_tsc() {
    now_ns();
    return uses_tsc_.load(std::memory_order_acquire);
  }
  // Ticks per second as currently estimated (0 without the TSC).
  double tsc_hz() {
    now_ns();
    return tsc_hz_.load(std::memory_order_relaxed);
  }

 private:
  struct Pair {
    std::uint64_t tsc = 0;
    std::int64_t ns = 0;
  };

  static constexpr int kRing = 64;  // segments are reused after 64 checks (>= 8 s)
  static constexpr std::int64_t kFirstIntervalNs = 1000000;
  static constexpr std::int64_t kMaxIntervalNs = 250000000;
  // Segment::value_at multiplies in 64 bits: a segment's readings stay
  // under 2^30 ns from its anchor.
  static_assert(kMaxIntervalNs < (std::int64_t{1} << 30), "Segment::value_at would overflow");

#if REGIONTRACE_CLOCK_HAS_TSC
  // A TSC reading bracketed by two clock_gettime calls, paired with their
  // midpoint; the narrowest of a few tries (a preemption widens a bracket).
  static Pair read_pair() {
    Pair best;
    std::int64_t best_width = -1;
    for (int attempt = 0; attempt < 3; ++attempt) {
      const std::int64_t before = monotonic_ns();
      const std::uint64_t tsc = __rdtsc();
      const std::int64_t after = monotonic_ns();
      if (best_width < 0 || after - before < best_width) {
        best_width = after - before;
        best = {tsc, before + (after - before) / 2};
      }
    }
    return best;
  }

  __attribute__((noinline, cold)) std::int64_t slow_now_ns() {
    if (!started_.load(std::memory_order_acquire)) start();
    if (!uses_tsc_.load(std::memory_order_acquire)) return monotonic_ns();
    const std::uint64_t t = __rdtsc();
    const Segment* s = current_.load(std::memory_order_acquire);
    if (t < s->next_check_tsc) return s->value_at(t);
    if (recalibrating_.exchange(true, std::memory_order_acquire)) return s->value_at_wide(t);
    recalibrate(*s);
    recalibrating_.store(false, std::memory_order_release);
    return current_.load(std::memory_order_acquire)->value_at_wide(__rdtsc());
  }

  void start() {
    static std::atomic<bool> lock{false};  // one first calibration per process is plenty
    while (lock.exchange(true, std::memory_order_acquire)) {
    }
    if (!started_.load(std::memory_order_relaxed)) {
      if (wanted_ == Source::kTsc && tsc_usable()) {
        first_ = read_pair();
        Pair second;
        do {
          second = read_pair();
        } while (second.ns - first_.ns < 200000 || second.tsc <= first_.tsc);
        const double ns_per_tick = static_cast<double>(second.ns - first_.ns) /
                                   static_cast<double>(second.tsc - first_.tsc);
        interval_ns_ = kFirstIntervalNs;
        publish(second, second.ns, ns_per_tick);
        uses_tsc_.store(true, std::memory_order_release);
      }
      started_.store(true, std::memory_order_release);
    }
    lock.store(false, std::memory_order_release);
  }

  void recalibrate(const Segment& old) {
    const Pair now = read_pair();
    if (now.tsc <= first_.tsc) return;
    const double ns_per_tick =
        static_cast<double>(now.ns - first_.ns) / static_cast<double>(now.tsc - first_.tsc);
    const std::int64_t old_value = old.value_at_wide(now.tsc);
    interval_ns_ = interval_ns_ * 2 > kMaxIntervalNs ? kMaxIntervalNs : interval_ns_ * 2;
    publish(now, old_value > now.ns ? old_value : now.ns, ns_per_tick);
  }

  // Starts a segment at (now.tsc, start_ns) that meets the true clock at the
  // next check point; start_ns may lead the true clock (never steps back).
  void publish(const Pair& now, std::int64_t start_ns, double ns_per_tick) {
    const double interval_ticks = static_cast<double>(interval_ns_) / ns_per_tick;
    const double target_ns = static_cast<double>(now.ns - start_ns) + interval_ns_;
    // A lead larger than half the interval is absorbed over more intervals.
    const double slope =
        target_ns < 0.5 * interval_ns_ ? 0.5 * ns_per_tick : target_ns / interval_ticks;
    Segment& s = ring_[next_slot_++ % kRing];
    s.anchor_tsc = now.tsc;
    s.anchor_ns = start_ns;
    s.mult = static_cast<std::uint64_t>(slope * 4294967296.0);
    s.next_check_tsc = now.tsc + static_cast<std::uint64_t>(interval_ticks);
    tsc_hz_.store(1e9 / ns_per_tick, std::memory_order_relaxed);
    current_.store(&s, std::memory_order_release);
    if (mirror_ != nullptr) mirror_->store(&s, std::memory_order_release);
  }
#endif

  Source wanted_;
  std::atomic<const Segment*>* mirror_;
  std::atomic<const Segment*> current_{nullptr};
  std::atomic<bool> started_{false};
  std::atomic<bool> uses_tsc_{false};
  std::atomic<bool> recalibrating_{false};
  std::atomic<double> tsc_hz_{0};
  Pair first_;
  std::int64_t interval_ns_ = kFirstIntervalNs;
  unsigned next_slot_ = 0;
  Segment ring_[kRing];
};

// The process's clock (one per plugin or library that includes this
// header); never destroyed, so exit handlers may still read it.
inline CalibratedClock& process_clock() {
  static CalibratedClock* const clock = new CalibratedClock();
  return *clock;
}

inline std::int64_t now_ns() {
  return process_clock().now_ns();
}

}  // namespace regiontrace::sdk::clock
