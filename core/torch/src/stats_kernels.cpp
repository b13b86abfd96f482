// The fused statistics loop. One pass computes every statistic; the loop
// keeps kLanes independent accumulators per statistic so that the compiler
// can vectorise it without reassociating floating-point sums (no
// -ffast-math). Variance uses a shifted sum of squares (shift = the block's
// first element), which keeps the one-pass formula stable for data whose
// mean is large against its spread; non-finite data take a scalar path
// (Welford) that counts NaN and Inf exactly.
#include "stats_kernels.hpp"

#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>

#include <cmath>
#include <cstring>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define RT_STATS_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define RT_STATS_CLONES
#endif
#define RT_ALWAYS_INLINE inline __attribute__((always_inline))

namespace regiontrace::stats {
namespace {

constexpr int kLanes = 8;

RT_ALWAYS_INLINE double load(const double* p) { return *p; }
RT_ALWAYS_INLINE double load(const float* p) { return *p; }
RT_ALWAYS_INLINE double load(const std::uint8_t* p) { return *p; }
RT_ALWAYS_INLINE double load(const std::int8_t* p) { return *p; }
RT_ALWAYS_INLINE double load(const std::int16_t* p) { return *p; }
RT_ALWAYS_INLINE double load(const std::int32_t* p) { return *p; }
RT_ALWAYS_INLINE double load(const std::int64_t* p) { return static_cast<double>(*p); }
RT_ALWAYS_INLINE double load(const c10::BFloat16* p) {
  std::uint16_t bits;
  std::memcpy(&bits, p, sizeof(bits));
  const std::uint32_t wide = static_cast<std::uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &wide, sizeof(f));
  return f;
}
RT_ALWAYS_INLINE double load(const c10::Half* p) {
  std::uint16_t bits;
  std::memcpy(&bits, p, sizeof(bits));
  return c10::detail::fp16_ieee_to_fp32_value(bits);
}

// Non-finite data, or squares too large for double: exact counts, Welford.
template <typename T>
RT_ALWAYS_INLINE void scan_slow(const T* p, std::int64_t n, Partial* out) {
  Partial r;
  for (std::int64_t i = 0; i < n; ++i) {
    const double x = load(p + i);
    ++r.n;
    if (std::isnan(x)) {
      ++r.nans;
    } else if (std::isinf(x)) {
      ++r.infs;
    }
    r.sum += x;
    r.sumsq += x * x;
    r.abs_sum += std::fabs(x);
    if (x < r.min) r.min = x;
    if (x > r.max) r.max = x;
    if (x == 0) r.zeros += 1;
    const double delta = x - r.mean;
    r.mean += delta / static_cast<double>(r.n);
    r.m2 += delta * (x - r.mean);
  }
  *out = r;
}

// Returns false when the data hold NaN or Inf (or overflow): use scan_slow.
template <typename T>
RT_ALWAYS_INLINE bool scan_fast(const T* p, std::int64_t n, Partial* out) {
  const double shift = load(p);
  if (!std::isfinite(shift)) return false;
  double s[kLanes] = {}, q[kLanes] = {}, a[kLanes] = {}, z[kLanes] = {};
  double lo[kLanes], hi[kLanes];
  for (int j = 0; j < kLanes; ++j) {
    lo[j] = shift;
    hi[j] = shift;
  }
  std::int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) {
      const double x = load(p + i + j);
      const double d = x - shift;
      s[j] += d;
      q[j] += d * d;
      a[j] += std::fabs(x);
      z[j] += x == 0.0 ? 1.0 : 0.0;
      lo[j] = x < lo[j] ? x : lo[j];
      hi[j] = x > hi[j] ? x : hi[j];
    }
  }
  for (int j = 0; i < n; ++i, ++j) {
    const double x = load(p + i);
    const double d = x - shift;
    s[j] += d;
    q[j] += d * d;
    a[j] += std::fabs(x);
    z[j] += x == 0.0 ? 1.0 : 0.0;
    lo[j] = x < lo[j] ? x : lo[j];
    hi[j] = x > hi[j] ? x : hi[j];
  }
  Partial r;
  double sd = 0, qd = 0;
  r.min = lo[0];
  r.max = hi[0];
  for (int j = 0; j < kLanes; ++j) {
    sd += s[j];
    qd += q[j];
    r.abs_sum += a[j];
    r.zeros += z[j];
    r.min = lo[j] < r.min ? lo[j] : r.min;
    r.max = hi[j] > r.max ? hi[j] : r.max;
  }
  // Any NaN or Inf reaches the shifted sums (Inf - Inf is NaN too).
  if (!std::isfinite(sd) || !std::isfinite(qd) || !std::isfinite(r.abs_sum)) return false;
  const double dn = static_cast<double>(n);
  r.n = n;
  r.sum = dn * shift + sd;
  r.mean = shift + sd / dn;
  r.m2 = qd - sd * (sd / dn);
  if (r.m2 < 0) r.m2 = 0;
  r.sumsq = qd + 2.0 * shift * sd + dn * shift * shift;
  if (!std::isfinite(r.sumsq)) return false;
  *out = r;
  return true;
}

template <typename T>
RT_ALWAYS_INLINE void scan(const T* p, std::int64_t n, Partial* out) {
  if (!scan_fast(p, n, out)) scan_slow(p, n, out);
}

// One entry point per type: target_clones on plain functions, the template
// body inlined into each clone.
RT_STATS_CLONES void scan_f64(const double* p, std::int64_t n, Partial* o) { scan(p, n, o); }
RT_STATS_CLONES void scan_f32(const float* p, std::int64_t n, Partial* o) { scan(p, n, o); }
RT_STATS_CLONES void scan_f16(const c10::Half* p, std::int64_t n, Partial* o) { scan(p, n, o); }
RT_STATS_CLONES void scan_bf16(const c10::BFloat16* p, std::int64_t n, Partial* o) {
  scan(p, n, o);
}
RT_STATS_CLONES void scan_u8(const std::uint8_t* p, std::int64_t n, Partial* o) { scan(p, n, o); }
RT_STATS_CLONES void scan_i8(const std::int8_t* p, std::int64_t n, Partial* o) { scan(p, n, o); }
RT_STATS_CLONES void scan_i16(const std::int16_t* p, std::int64_t n, Partial* o) { scan(p, n, o); }
RT_STATS_CLONES void scan_i32(const std::int32_t* p, std::int64_t n, Partial* o) { scan(p, n, o); }
RT_STATS_CLONES void scan_i64(const std::int64_t* p, std::int64_t n, Partial* o) { scan(p, n, o); }

}  // namespace

int element_size(ElementKind kind) {
  switch (kind) {
    case ElementKind::kF64:
    case ElementKind::kI64: return 8;
    case ElementKind::kF32:
    case ElementKind::kI32: return 4;
    case ElementKind::kF16:
    case ElementKind::kBF16:
    case ElementKind::kI16: return 2;
    case ElementKind::kU8:
    case ElementKind::kI8: return 1;
  }
  return 1;
}

void scan_contiguous(ElementKind kind, const void* data, std::int64_t n, Partial* out) {
  switch (kind) {
    case ElementKind::kF64: return scan_f64(static_cast<const double*>(data), n, out);
    case ElementKind::kF32: return scan_f32(static_cast<const float*>(data), n, out);
    case ElementKind::kF16: return scan_f16(static_cast<const c10::Half*>(data), n, out);
    case ElementKind::kBF16: return scan_bf16(static_cast<const c10::BFloat16*>(data), n, out);
    case ElementKind::kU8: return scan_u8(static_cast<const std::uint8_t*>(data), n, out);
    case ElementKind::kI8: return scan_i8(static_cast<const std::int8_t*>(data), n, out);
    case ElementKind::kI16: return scan_i16(static_cast<const std::int16_t*>(data), n, out);
    case ElementKind::kI32: return scan_i32(static_cast<const std::int32_t*>(data), n, out);
    case ElementKind::kI64: return scan_i64(static_cast<const std::int64_t*>(data), n, out);
  }
}

}  // namespace regiontrace::stats
