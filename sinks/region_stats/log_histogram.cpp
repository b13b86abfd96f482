#include "log_histogram.hpp"

#include <algorithm>
#include <cmath>

namespace regiontrace::region_stats {

std::int64_t LogBuckets::lower_bound(std::size_t index) {
  constexpr std::size_t exact = std::size_t{1} << kExactBits;
  if (index < exact) return static_cast<std::int64_t>(index);
  const std::size_t rest = index - exact;
  const int exponent = kExactBits + static_cast<int>(rest / kSubBuckets);
  const std::int64_t sub = static_cast<std::int64_t>(rest % kSubBuckets);
  const int shift = exponent - (kExactBits - 1);
  return (std::int64_t{1} << exponent) + (sub << shift);
}

std::int64_t LogBuckets::upper_bound(std::size_t index) {
  constexpr std::size_t exact = std::size_t{1} << kExactBits;
  if (index < exact) return static_cast<std::int64_t>(index) + 1;
  const std::size_t rest = index - exact;
  const int exponent = kExactBits + static_cast<int>(rest / kSubBuckets);
  return lower_bound(index) + (std::int64_t{1} << (exponent - (kExactBits - 1)));
}

void HistogramCounts::merge(const HistogramCounts& other) {
  for (std::size_t i = 0; i < counts_.size(); ++i) counts_[i] += other.counts_[i];
}

std::uint64_t HistogramCounts::total() const {
  std::uint64_t n = 0;
  for (std::uint64_t c : counts_) n += c;
  return n;
}

std::int64_t HistogramCounts::percentile(double q, std::int64_t min_ns, std::int64_t max_ns) const {
  const std::uint64_t n = total();
  if (n == 0) return 0;
  // The nearest-rank definition: the smallest value with at least q*n
  // values at or below it.
  std::uint64_t rank = static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(n)));
  rank = std::clamp<std::uint64_t>(rank, 1, n);
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < counts_.size(); ++i) {
    seen += counts_[i];
    if (seen >= rank) {
      const std::int64_t lo = LogBuckets::lower_bound(i);
      const std::int64_t hi = LogBuckets::upper_bound(i);
      // Exact buckets hold one value; wider ones answer their midpoint.
      const std::int64_t mid = hi - lo == 1 ? lo : lo + (hi - lo) / 2;
      return std::clamp(mid, min_ns, max_ns);
    }
  }
  return max_ns;
}

LiveHistogram::~LiveHistogram() {
  for (std::atomic<Chunk*>& c : chunks_) delete c.load(std::memory_order_acquire);
}

LiveHistogram::Chunk* LiveHistogram::add_chunk(std::size_t k) {
  // Only the owner adds chunks; release publishes the zeroed counters to
  // readers that find the pointer.
  Chunk* chunk = new Chunk();
  chunks_[k].store(chunk, std::memory_order_release);
  return chunk;
}

void LiveHistogram::add_to(HistogramCounts& out) const {
  std::vector<std::uint64_t>& c = out.counts();
  for (std::size_t i = 0; i < kExact; ++i) c[i] += exact_[i].load(std::memory_order_relaxed);
  for (std::size_t k = 0; k < kChunks; ++k) {
    const Chunk* chunk = chunks_[k].load(std::memory_order_acquire);
    if (chunk == nullptr) continue;
    for (std::size_t j = 0; j < LogBuckets::kSubBuckets; ++j) {
      c[kExact + k * LogBuckets::kSubBuckets + j] +=
          chunk->counts[j].load(std::memory_order_relaxed);
    }
  }
}

}  // namespace regiontrace::region_stats
