// Durations in fixed memory: log-linear buckets (HDR-like). Values below
// 2^kExactBits ns are counted exactly; above, every power of two is split
// into 2^(kExactBits-1) equal sub-buckets, so a bucket is at most
// 1/2^(kExactBits-1) of its lower bound wide. A percentile is reported as
// its bucket's midpoint: relative error at most half a bucket width,
// kRelativeError (0.79 %), whatever the run's length or distribution.
// Values past kMaxTrackableNs (2^42 ns, ~73 min) land in the last bucket
// (min/max are kept exactly elsewhere).
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace regiontrace::region_stats {

struct LogBuckets {
  static constexpr int kExactBits = 7;
  static constexpr int kMaxExponent = 42;
  static constexpr std::int64_t kMaxTrackableNs = std::int64_t{1} << kMaxExponent;
  static constexpr std::size_t kSubBuckets = std::size_t{1} << (kExactBits - 1);
  static constexpr std::size_t kCount =
      (std::size_t{1} << kExactBits) + (kMaxExponent - kExactBits) * kSubBuckets;
  static constexpr double kRelativeError = 0.5 / static_cast<double>(kSubBuckets);

  // Inline: the sink computes it on every region end, and a call costs
  // more than the exact-range test that answers most of them.
  static std::size_t index_of(std::int64_t ns) {
    if (ns < 0) ns = 0;
    const std::uint64_t v = static_cast<std::uint64_t>(ns);
    constexpr std::uint64_t exact = std::uint64_t{1} << kExactBits;
    if (v < exact) return static_cast<std::size_t>(v);
    if (v >= static_cast<std::uint64_t>(kMaxTrackableNs)) return kCount - 1;
    const int exponent = 63 - __builtin_clzll(v);  // >= kExactBits
    const int shift = exponent - (kExactBits - 1);
    const std::size_t sub = static_cast<std::size_t>((v >> shift) & (kSubBuckets - 1));
    return exact + static_cast<std::size_t>(exponent - kExactBits) * kSubBuckets + sub;
  }
  // [lower, upper) of bucket `index`, in ns.
  static std::int64_t lower_bound(std::size_t index);
  static std::int64_t upper_bound(std::size_t index);
};

// Plain counts: what readers merge and compute percentiles from.
class HistogramCounts {
 public:
  HistogramCounts() : counts_(LogBuckets::kCount, 0) {}
  void add(std::int64_t ns, std::uint64_t n = 1) { counts_[LogBuckets::index_of(ns)] += n; }
  void merge(const HistogramCounts& other);
  std::uint64_t total() const;
  // The q-quantile (0 < q <= 1) as its bucket's midpoint, clamped into
  // [min_ns, max_ns] (the exact extremes), or 0 when empty.
  std::int64_t percentile(double q, std::int64_t min_ns, std::int64_t max_ns) const;
  std::vector<std::uint64_t>& counts() { return counts_; }
  const std::vector<std::uint64_t>& counts() const { return counts_; }

 private:
  std::vector<std::uint64_t> counts_;
};

// Written by one thread (relaxed load + store, no read-modify-write on the
// hot path), read by any thread at scrape and shutdown time. Memory follows
// the range a region's durations actually span: the exact counters are
// inline (1 KB), each power of two above gets its 64 counters (512 B) when
// its first value arrives, so a typical region uses a few KB, not the 19 KB
// of every bucket.
class LiveHistogram {
 public:
  LiveHistogram() = default;
  ~LiveHistogram();
  LiveHistogram(const LiveHistogram&) = delete;
  LiveHistogram& operator=(const LiveHistogram&) = delete;

  void record(std::int64_t ns) {
    const std::size_t index = LogBuckets::index_of(ns);
    if (index < kExact) {
      bump(exact_[index]);
      return;
    }
    const std::size_t rest = index - kExact;
    Chunk* chunk = chunks_[rest / LogBuckets::kSubBuckets].load(std::memory_order_relaxed);
    if (chunk == nullptr) chunk = add_chunk(rest / LogBuckets::kSubBuckets);
    bump(chunk->counts[rest % LogBuckets::kSubBuckets]);
  }
  // The counter of bucket `index` (LogBuckets::index_of), or nullptr while
  // its chunk is not there yet (record() adds it): the owner's fast path
  // that must not call out.
  std::atomic<std::uint64_t>* counter(std::size_t index) {
    if (index < kExact) return &exact_[index];
    const std::size_t rest = index - kExact;
    Chunk* chunk = chunks_[rest / LogBuckets::kSubBuckets].load(std::memory_order_relaxed);
    return chunk != nullptr ? &chunk->counts[rest % LogBuckets::kSubBuckets] : nullptr;
  }
  void add_to(HistogramCounts& out) const;

 private:
  static constexpr std::size_t kExact = std::size_t{1} << LogBuckets::kExactBits;
  static constexpr std::size_t kChunks = LogBuckets::kMaxExponent - LogBuckets::kExactBits;
  struct Chunk {
    std::array<std::atomic<std::uint64_t>, LogBuckets::kSubBuckets> counts{};
  };
  static void bump(std::atomic<std::uint64_t>& c) {
    c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
  Chunk* add_chunk(std::size_t k);

  std::array<std::atomic<std::uint64_t>, kExact> exact_{};
  std::array<std::atomic<Chunk*>, kChunks> chunks_{};
};

}  // namespace regiontrace::region_stats
