// The statistics of one block of elements, and how blocks combine. Blocks
// are fixed by element index (not by thread), and combined in index order,
// so results do not depend on the size of the thread pool.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

namespace regiontrace::stats {

struct Partial {
  std::int64_t n = 0;
  double sum = 0;      // Σx
  double sumsq = 0;    // Σx²
  double abs_sum = 0;  // Σ|x|
  double mean = 0;     // with m2: the variance, combined the stable way (Chan et al.)
  double m2 = 0;       // Σ(x - mean)²
  double min = std::numeric_limits<double>::infinity();   // NaN ignored here,
  double max = -std::numeric_limits<double>::infinity();  // applied at the end
  double zeros = 0;  // counted in double: exact up to 2^53 elements
  std::int64_t nans = 0;
  std::int64_t infs = 0;
};

inline void merge(Partial& a, const Partial& b) {
  if (b.n == 0) return;
  if (a.n == 0) {
    a = b;
    return;
  }
  const double na = static_cast<double>(a.n);
  const double nb = static_cast<double>(b.n);
  const double n = na + nb;
  const double delta = b.mean - a.mean;
  a.mean += delta * (nb / n);
  a.m2 += b.m2 + delta * delta * (na * nb / n);
  a.n += b.n;
  a.sum += b.sum;
  a.sumsq += b.sumsq;
  a.abs_sum += b.abs_sum;
  a.min = b.min < a.min ? b.min : a.min;
  a.max = b.max > a.max ? b.max : a.max;
  a.zeros += b.zeros;
  a.nans += b.nans;
  a.infs += b.infs;
}

}  // namespace regiontrace::stats
