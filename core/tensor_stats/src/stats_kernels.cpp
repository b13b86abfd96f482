// The fused statistics loop. One pass computes every statistic in explicit
// vector lanes (GCC/Clang vector extensions): explicit lanes vectorise
// without letting the compiler reassociate floating-point sums (no
// -ffast-math). Sums accumulate in double; min, max and zero counts of
// float-like data run in float, twice as wide. Each type's entry point is
// multi-versioned (AVX2 and baseline), fp32 and bf16 also have an AVX-512
// variant chosen at run time. Variance uses a shifted sum of squares (shift = the block's
// first element), which keeps the one-pass formula stable for data whose
// mean is large against its spread; non-finite data take a scalar path
// (Welford) that counts NaN and Inf exactly.
#include "stats_kernels.hpp"

#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
// GCC 12's own intrinsics warn of a deliberately undefined register
// (GCC bug 105593) wherever they are inlined: not ours to fix.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#endif

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <utility>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define RT_STATS_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define RT_STATS_CLONES
#endif
#define RT_ALWAYS_INLINE inline __attribute__((always_inline))

namespace regiontrace::stats {
namespace {

RT_ALWAYS_INLINE double load(const double* p) {
  return *p;
}
RT_ALWAYS_INLINE double load(const float* p) {
  return *p;
}
RT_ALWAYS_INLINE double load(const std::uint8_t* p) {
  return *p;
}
RT_ALWAYS_INLINE double load(const std::int8_t* p) {
  return *p;
}
RT_ALWAYS_INLINE double load(const std::int16_t* p) {
  return *p;
}
RT_ALWAYS_INLINE double load(const std::int32_t* p) {
  return *p;
}
RT_ALWAYS_INLINE double load(const std::int64_t* p) {
  return static_cast<double>(*p);
}
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

// GCC/Clang vector extensions: one source, compiled to AVX2 in the avx2
// clone and to SSE2 pairs in the baseline one.
typedef double VecD __attribute__((vector_size(32)));
typedef long long VecL __attribute__((vector_size(32)));
typedef float VecF __attribute__((vector_size(16)));
typedef int VecI __attribute__((vector_size(16)));
typedef unsigned int VecU __attribute__((vector_size(16)));
typedef unsigned short VecUS __attribute__((vector_size(8)));
typedef short VecS __attribute__((vector_size(8)));
typedef signed char VecC __attribute__((vector_size(4)));
typedef unsigned char VecUC __attribute__((vector_size(4)));
typedef long long VecL64 __attribute__((vector_size(32)));

template <typename V>
RT_ALWAYS_INLINE V load_raw(const void* p) {
  V v;
  std::memcpy(&v, p, sizeof(V));
  return v;
}

// Four elements, widened to double (float-like types: see scan_fast_float).
RT_ALWAYS_INLINE VecD load4(const double* p) {
  return load_raw<VecD>(p);
}
RT_ALWAYS_INLINE VecD load4(const std::uint8_t* p) {
  return __builtin_convertvector(load_raw<VecUC>(p), VecD);
}
RT_ALWAYS_INLINE VecD load4(const std::int8_t* p) {
  return __builtin_convertvector(load_raw<VecC>(p), VecD);
}
RT_ALWAYS_INLINE VecD load4(const std::int16_t* p) {
  return __builtin_convertvector(load_raw<VecS>(p), VecD);
}
RT_ALWAYS_INLINE VecD load4(const std::int32_t* p) {
  return __builtin_convertvector(load_raw<VecI>(p), VecD);
}
RT_ALWAYS_INLINE VecD load4(const std::int64_t* p) {
  return __builtin_convertvector(load_raw<VecL64>(p), VecD);
}

// The accumulators of one vector lane group.
struct Acc {
  VecD s, q, a, lo, hi;
  VecL z;
};

RT_ALWAYS_INLINE void step(Acc& acc, VecD x, VecD shift) {
  const VecL kAbsMask = {0x7fffffffffffffffLL, 0x7fffffffffffffffLL, 0x7fffffffffffffffLL,
                         0x7fffffffffffffffLL};
  const VecD d = x - shift;
  acc.s += d;
  acc.q += d * d;
  const VecL bits = (VecL)x & kAbsMask;  // vector casts reinterpret the bits
  acc.a += (VecD)bits;
  acc.z -= (x == VecD{});  // a true comparison is -1
  acc.lo = x < acc.lo ? x : acc.lo;
  acc.hi = x > acc.hi ? x : acc.hi;
}

// The scalar tail [i, n) of a fast scan, then the block's Partial. Returns
// false when the data hold NaN or Inf: any reaches the shifted sums (Inf -
// Inf is NaN too).
template <typename T>
RT_ALWAYS_INLINE bool finish_fast(const T* p, std::int64_t i, std::int64_t n, double first,
                                  double sd, double qd, double zeros, Partial& r, Partial* out) {
  for (; i < n; ++i) {
    const double x = load(p + i);
    const double d = x - first;
    sd += d;
    qd += d * d;
    r.abs_sum += std::fabs(x);
    zeros += x == 0.0 ? 1.0 : 0.0;
    r.min = x < r.min ? x : r.min;
    r.max = x > r.max ? x : r.max;
  }
  if (!std::isfinite(sd) || !std::isfinite(qd) || !std::isfinite(r.abs_sum)) return false;
  const double dn = static_cast<double>(n);
  r.n = n;
  r.zeros = zeros;
  r.sum = dn * first + sd;
  r.mean = first + sd / dn;
  r.m2 = qd - sd * (sd / dn);
  if (r.m2 < 0) r.m2 = 0;
  r.sumsq = qd + 2.0 * first * sd + dn * first * first;
  if (!std::isfinite(r.sumsq)) return false;
  *out = r;
  return true;
}

// Returns false when the data hold NaN or Inf (or overflow): use scan_slow.
template <typename T>
RT_ALWAYS_INLINE bool scan_fast(const T* p, std::int64_t n, Partial* out) {
  const double first = load(p);
  if (!std::isfinite(first)) return false;
  const VecD shift = {first, first, first, first};
  // One group of four lanes: the adds' latency is well hidden at four
  // elements per iteration, and more groups would spill registers.
  Acc acc{{}, {}, {}, shift, shift, {}};
  std::int64_t i = 0;
  for (; i + 4 <= n; i += 4) step(acc, load4(p + i), shift);
  double sd = 0, qd = 0, zeros = 0;
  Partial r;
  r.min = r.max = first;
  for (int j = 0; j < 4; ++j) {
    sd += acc.s[j];
    qd += acc.q[j];
    r.abs_sum += acc.a[j];
    zeros += static_cast<double>(acc.z[j]);
    r.min = std::min(r.min, acc.lo[j]);
    r.max = std::max(r.max, acc.hi[j]);
  }
  return finish_fast(p, i, n, first, sd, qd, zeros, r, out);
}

// Float-like data (fp32, bf16, fp16 widened): min, max and the zero count are
// exact in float, so they run W lanes wide before widening; the sums run in
// double, in two groups of W/2 lanes so that their adds' latency hides. W = 8
// is 256-bit code (AVX2, or SSE2 pairs), W = 16 the AVX-512 variant.
template <int W>
struct Wide;
template <>
struct Wide<8> {
  typedef float F __attribute__((vector_size(32)));
  typedef int I __attribute__((vector_size(32)));
  typedef unsigned int U __attribute__((vector_size(32)));
  typedef unsigned short H __attribute__((vector_size(16)));
  typedef double D __attribute__((vector_size(32)));
  typedef long long L __attribute__((vector_size(32)));
  typedef float HalfF __attribute__((vector_size(16)));
  typedef unsigned int HalfU __attribute__((vector_size(16)));
  typedef unsigned short HalfH __attribute__((vector_size(8)));
};
template <>
struct Wide<16> {
  typedef float F __attribute__((vector_size(64)));
  typedef int I __attribute__((vector_size(64)));
  typedef unsigned int U __attribute__((vector_size(64)));
  typedef unsigned short H __attribute__((vector_size(32)));
  typedef double D __attribute__((vector_size(64)));
  typedef long long L __attribute__((vector_size(64)));
  typedef float HalfF __attribute__((vector_size(32)));
  typedef unsigned int HalfU __attribute__((vector_size(32)));
  typedef unsigned short HalfH __attribute__((vector_size(16)));
};

// Lane-wise construction: GCC turns it into one widening instruction
// (vpmovzxwd, vcvtps2pd) where __builtin_convertvector splits in halves.
template <typename V, typename S, std::size_t... I>
RT_ALWAYS_INLINE V lanes(const S& src, std::index_sequence<I...>, int offset = 0) {
  return V{src[offset + static_cast<int>(I)]...};
}

template <int W>
RT_ALWAYS_INLINE typename Wide<W>::F load_wide(const float* p) {
  return load_raw<typename Wide<W>::F>(p);
}
template <int W>
RT_ALWAYS_INLINE typename Wide<W>::F load_wide(const c10::BFloat16* p) {
  using U = typename Wide<W>::U;
  const U wide = lanes<U>(load_raw<typename Wide<W>::H>(p), std::make_index_sequence<W>()) << 16;
  return (typename Wide<W>::F)wide;
}

// W/2 elements widened to double, read from memory again: cheaper than
// splitting the W-wide register.
template <int W>
RT_ALWAYS_INLINE typename Wide<W>::D load_doubles(const float* p) {
  return lanes<typename Wide<W>::D>(load_raw<typename Wide<W>::HalfF>(p),
                                    std::make_index_sequence<W / 2>());
}
template <int W>
RT_ALWAYS_INLINE typename Wide<W>::D load_doubles(const c10::BFloat16* p) {
  using U = typename Wide<W>::HalfU;
  const U wide = lanes<U>(load_raw<typename Wide<W>::HalfH>(p), std::make_index_sequence<W / 2>())
                 << 16;
  const typename Wide<W>::HalfF f = (typename Wide<W>::HalfF)wide;
  return lanes<typename Wide<W>::D>(f, std::make_index_sequence<W / 2>());
}

template <int W>
struct Sums {
  typename Wide<W>::D s, q, a;
};

template <int W>
RT_ALWAYS_INLINE void add_sums(Sums<W>& acc, typename Wide<W>::D x, typename Wide<W>::D shift) {
  using L = typename Wide<W>::L;
  const L abs_mask = L{} + 0x7fffffffffffffffLL;
  const typename Wide<W>::D d = x - shift;
  acc.s += d;
  acc.q += d * d;
  acc.a += (typename Wide<W>::D)((L)x & abs_mask);  // vector casts reinterpret the bits
}

// A prefetch never faults, so prefetching past the end of the data is harmless.
constexpr std::size_t kPrefetchBytes = 4096;

template <int W, typename T>
RT_ALWAYS_INLINE bool scan_fast_float(const T* p, std::int64_t n, Partial* out) {
  using F = typename Wide<W>::F;
  using D = typename Wide<W>::D;
  constexpr int kHalf = W / 2;
  const double first = load(p);
  if (!std::isfinite(first)) return false;
  const D shift = D{} + first;
  F lo = F{} + static_cast<float>(first);
  F hi = lo;
  typename Wide<W>::I zeros = {};
  Sums<W> g0{}, g1{};
  std::int64_t i = 0;
  for (; i + W <= n; i += W) {
    // 4 KiB ahead, more than the hardware prefetcher alone keeps in flight
    // for a loop this long: without it the loop read 5.3 GB/s on a Xeon
    // where sum() reads 18 (fp32, 16M elements: 12.1 -> 4.5 ms).
    __builtin_prefetch(reinterpret_cast<const char*>(p + i) + kPrefetchBytes);
    const F x = load_wide<W>(p + i);
    lo = x < lo ? x : lo;
    hi = x > hi ? x : hi;
    zeros -= (x == F{});  // a true comparison is -1; blocks keep counts small
    add_sums<W>(g0, load_doubles<W>(p + i), shift);
    add_sums<W>(g1, load_doubles<W>(p + i + kHalf), shift);
  }
  double sd = 0, qd = 0, zero_count = 0;
  Partial r;
  r.min = r.max = first;
  for (int j = 0; j < kHalf; ++j) {
    sd += g0.s[j] + g1.s[j];
    qd += g0.q[j] + g1.q[j];
    r.abs_sum += g0.a[j] + g1.a[j];
  }
  for (int j = 0; j < W; ++j) {
    zero_count += zeros[j];
    r.min = std::min(r.min, static_cast<double>(lo[j]));
    r.max = std::max(r.max, static_cast<double>(hi[j]));
  }
  return finish_fast(p, i, n, first, sd, qd, zero_count, r, out);
}

// fp16 has no cheap vector widening without F16C: widen a slice to float
// first, then run the float loop on it.
RT_ALWAYS_INLINE bool scan_fast(const c10::Half* p, std::int64_t n, Partial* out) {
  constexpr std::int64_t kSlice = 2048;
  float buffer[kSlice];
  Partial total;
  for (std::int64_t begin = 0; begin < n; begin += kSlice) {
    const std::int64_t count = std::min(kSlice, n - begin);
    for (std::int64_t i = 0; i < count; ++i) buffer[i] = static_cast<float>(load(p + begin + i));
    Partial part;
    if (!scan_fast_float<8>(buffer, count, &part)) return false;
    merge(total, part);
  }
  *out = total;
  return true;
}

template <typename T>
RT_ALWAYS_INLINE bool scan_any(const T* p, std::int64_t n, Partial* out) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, c10::BFloat16>) {
    return scan_fast_float<8>(p, n, out);
  } else {
    return scan_fast(p, n, out);
  }
}

template <typename T>
RT_ALWAYS_INLINE void scan(const T* p, std::int64_t n, Partial* out) {
  if (!scan_any(p, n, out)) scan_slow(p, n, out);
}

// One entry point per type: target_clones on plain functions, the template
// body inlined into each clone.
RT_STATS_CLONES void scan_f64(const double* p, std::int64_t n, Partial* o) {
  scan(p, n, o);
}
RT_STATS_CLONES void scan_f32(const float* p, std::int64_t n, Partial* o) {
  scan(p, n, o);
}
RT_STATS_CLONES void scan_f16(const c10::Half* p, std::int64_t n, Partial* o) {
  scan(p, n, o);
}
RT_STATS_CLONES void scan_bf16(const c10::BFloat16* p, std::int64_t n, Partial* o) {
  scan(p, n, o);
}
RT_STATS_CLONES void scan_u8(const std::uint8_t* p, std::int64_t n, Partial* o) {
  scan(p, n, o);
}
RT_STATS_CLONES void scan_i8(const std::int8_t* p, std::int64_t n, Partial* o) {
  scan(p, n, o);
}
RT_STATS_CLONES void scan_i16(const std::int16_t* p, std::int64_t n, Partial* o) {
  scan(p, n, o);
}
RT_STATS_CLONES void scan_i32(const std::int32_t* p, std::int64_t n, Partial* o) {
  scan(p, n, o);
}
RT_STATS_CLONES void scan_i64(const std::int64_t* p, std::int64_t n, Partial* o) {
  scan(p, n, o);
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
// The two hot float-like types, 512 bits wide where the CPU has AVX-512.
#define RT_AVX512 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl")))
RT_AVX512 void scan_f32_avx512(const float* p, std::int64_t n, Partial* o) {
  if (!scan_fast_float<16>(p, n, o)) scan_slow(p, n, o);
}

enum class Bf16Scan { kDone, kNonFinite, kNeedsShift };

// The extreme of 32 16-bit lanes, compared signed or unsigned.
RT_AVX512 std::uint16_t reduce_words(__m512i v, bool is_signed, bool want_max) {
  alignas(64) std::uint16_t w[32];
  _mm512_store_si512(w, v);
  const std::uint16_t flip =
      is_signed ? 0x8000 : 0;  // signed order is unsigned order, sign flipped
  std::uint16_t r = w[0];
  for (int j = 1; j < 32; ++j) {
    const bool above = (w[j] ^ flip) > (r ^ flip);
    if (w[j] != r && above == want_max) r = w[j];
  }
  return r;
}

// bf16 without a shift. scan_fast_float<16> spends about 24 vector uops per
// 16 elements on the two 512-bit ports, so bf16 ran at 3x a sum() pass, ALU
// bound. Here, per 32 elements (one 64-byte load):
// - min, max and zeros on the raw 16-bit words (5 uops): bf16 is
//   sign-magnitude, so the signed maximum is the maximum when any element is
//   non-negative, the unsigned maximum is the minimum when any is negative,
//   and the unsigned minimum covers the one-signed cases;
// - widening to float by masking (odd elements) and shifting (even ones) each
//   32-bit pair: element order does not matter to any statistic;
// - no shift: Σx and Σx² take one add and one FMA per double lane, and
//   Σ|x| = Σx - 2Σ(x < 0) one masked add, the masks taken from the float
//   sign bits (33 uops in all, 8.3 cycles per 16 elements against 12).
// Without a shift the variance cancels when the mean is large against the
// spread: a sample of the first elements sends such data to the shifted loop
// up front, and a bound on the rounding error of Σx² - (Σx)²/n sends it
// afterwards whenever the sample was misleading.
RT_AVX512 Bf16Scan scan_bf16_unshifted(const c10::BFloat16* p, std::int64_t n, Partial* out) {
  constexpr std::int64_t kSample = 32;
  if (n < 2 * kSample) return Bf16Scan::kNeedsShift;
  double sample_lo = load(p), sample_hi = sample_lo;
  for (std::int64_t i = 1; i < kSample; ++i) {
    const double x = load(p + i);
    sample_lo = std::min(sample_lo, x);  // NaN is ignored here, seen below
    sample_hi = std::max(sample_hi, x);
  }
  if (std::fabs(sample_lo + sample_hi) > 2 * (sample_hi - sample_lo)) return Bf16Scan::kNeedsShift;

  const __m512i odd_mask = _mm512_set1_epi32(static_cast<int>(0xffff0000u));
  const __m512i magnitude = _mm512_set1_epi16(0x7fff);
  const __m512i one = _mm512_set1_epi16(1);
  __m512i max_signed = _mm512_set1_epi16(-32768);
  __m512i max_unsigned = _mm512_setzero_si512();
  __m512i min_unsigned = _mm512_set1_epi16(-1);
  __m512i zeros32 = _mm512_setzero_si512();
  __m512d s[4], q[4], neg[4];
  for (int g = 0; g < 4; ++g) s[g] = q[g] = neg[g] = _mm512_setzero_pd();
  std::int64_t i = 0;
  while (i + 32 <= n) {
    // 16-bit zero counters, widened by a signed multiply-add: flushed before
    // any lane could pass 32767 (an all-zero run of 2M elements read 65535
    // as -1).
    const std::int64_t stop = std::min(n, i + 32 * std::int64_t{32767});
    __m512i zeros16 = _mm512_setzero_si512();
    for (; i + 32 <= stop; i += 32) {
      // Same distance as scan_fast_float: see there.
      __builtin_prefetch(reinterpret_cast<const char*>(p + i) + kPrefetchBytes);
      const __m512i v = _mm512_loadu_si512(p + i);
      max_signed = _mm512_max_epi16(max_signed, v);
      max_unsigned = _mm512_max_epu16(max_unsigned, v);
      min_unsigned = _mm512_min_epu16(min_unsigned, v);
      zeros16 = _mm512_mask_add_epi16(zeros16, _mm512_testn_epi16_mask(v, magnitude), zeros16, one);
      const __m512i even = _mm512_slli_epi32(v, 16);
      const __m512i odd = _mm512_and_si512(v, odd_mask);
      const __mmask16 even_neg = _mm512_movepi32_mask(even);
      const __mmask16 odd_neg = _mm512_movepi32_mask(v);
      const __m256 halves[4] = {_mm512_castps512_ps256(_mm512_castsi512_ps(even)),
                                _mm512_extractf32x8_ps(_mm512_castsi512_ps(even), 1),
                                _mm512_castps512_ps256(_mm512_castsi512_ps(odd)),
                                _mm512_extractf32x8_ps(_mm512_castsi512_ps(odd), 1)};
      const __mmask8 negative[4] = {
          static_cast<__mmask8>(even_neg), static_cast<__mmask8>(even_neg >> 8),
          static_cast<__mmask8>(odd_neg), static_cast<__mmask8>(odd_neg >> 8)};
      for (int g = 0; g < 4; ++g) {
        const __m512d x = _mm512_cvtps_pd(halves[g]);
        s[g] = _mm512_add_pd(s[g], x);
        q[g] = _mm512_fmadd_pd(x, x, q[g]);
        neg[g] = _mm512_mask_add_pd(neg[g], negative[g], neg[g], x);
      }
    }
    zeros32 = _mm512_add_epi32(zeros32, _mm512_madd_epi16(zeros16, one));
  }
  const double sum =
      _mm512_reduce_add_pd(_mm512_add_pd(_mm512_add_pd(s[0], s[1]), _mm512_add_pd(s[2], s[3])));
  const double sumsq =
      _mm512_reduce_add_pd(_mm512_add_pd(_mm512_add_pd(q[0], q[1]), _mm512_add_pd(q[2], q[3])));
  const double negative_sum = _mm512_reduce_add_pd(
      _mm512_add_pd(_mm512_add_pd(neg[0], neg[1]), _mm512_add_pd(neg[2], neg[3])));
  const auto bits_to_double = [](std::uint16_t bits) {
    c10::BFloat16 b;
    std::memcpy(&b, &bits, sizeof(b));
    return load(&b);
  };
  const std::uint16_t max_s = reduce_words(max_signed, true, true);
  const std::uint16_t max_u = reduce_words(max_unsigned, false, true);
  const std::uint16_t min_u = reduce_words(min_unsigned, false, false);
  Partial r;
  r.max = bits_to_double(max_s < 0x8000 ? max_s : min_u);   // any element >= +0: max_s
  r.min = bits_to_double(max_u >= 0x8000 ? max_u : min_u);  // any element <= -0: max_u
  r.abs_sum = sum - 2 * negative_sum;
  const double zero_count = _mm512_reduce_add_epi32(zeros32);
  if (!finish_fast(p, i, n, 0.0, sum, sumsq, zero_count, r, &r)) return Bf16Scan::kNonFinite;
  // Σx² and Σx are sums of exact terms, each lane's n/32 of them: their
  // rounding errors stay under (n/32 + 16) ulp-units of Σx² (Σx enters
  // squared, bounded by Σx² by Cauchy-Schwarz); 4 such bounds leave the
  // variance 1e-11 relative or better, else the shifted loop takes over.
  const double bound = 4 * (static_cast<double>(n) / 32 + 16) * 0x1p-53 * r.sumsq;
  if (bound > 1e-11 * r.m2) return Bf16Scan::kNeedsShift;
  *out = r;
  return Bf16Scan::kDone;
}

RT_AVX512 void scan_bf16_avx512(const c10::BFloat16* p, std::int64_t n, Partial* o) {
  const Bf16Scan unshifted = scan_bf16_unshifted(p, n, o);
  if (unshifted == Bf16Scan::kDone) return;
  if (unshifted == Bf16Scan::kNeedsShift && scan_fast_float<16>(p, n, o)) return;
  scan_slow(p, n, o);
}
bool has_avx512() {
  static const bool yes = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                          __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
  return yes;
}
#define RT_HAVE_AVX512_VARIANT 1
#endif

}  // namespace

int element_size(ElementKind kind) {
  switch (kind) {
    case ElementKind::kF64:
    case ElementKind::kI64:
      return 8;
    case ElementKind::kF32:
    case ElementKind::kI32:
      return 4;
    case ElementKind::kF16:
    case ElementKind::kBF16:
    case ElementKind::kI16:
      return 2;
    case ElementKind::kU8:
    case ElementKind::kI8:
      return 1;
  }
  return 1;
}

void scan_contiguous(ElementKind kind, const void* data, std::int64_t n, Partial* out) {
  switch (kind) {
    case ElementKind::kF64:
      return scan_f64(static_cast<const double*>(data), n, out);
    case ElementKind::kF32:
#if defined(RT_HAVE_AVX512_VARIANT)
      if (has_avx512()) return scan_f32_avx512(static_cast<const float*>(data), n, out);
#endif
      return scan_f32(static_cast<const float*>(data), n, out);
    case ElementKind::kF16:
      return scan_f16(static_cast<const c10::Half*>(data), n, out);
    case ElementKind::kBF16:
#if defined(RT_HAVE_AVX512_VARIANT)
      if (has_avx512()) return scan_bf16_avx512(static_cast<const c10::BFloat16*>(data), n, out);
#endif
      return scan_bf16(static_cast<const c10::BFloat16*>(data), n, out);
    case ElementKind::kU8:
      return scan_u8(static_cast<const std::uint8_t*>(data), n, out);
    case ElementKind::kI8:
      return scan_i8(static_cast<const std::int8_t*>(data), n, out);
    case ElementKind::kI16:
      return scan_i16(static_cast<const std::int16_t*>(data), n, out);
    case ElementKind::kI32:
      return scan_i32(static_cast<const std::int32_t*>(data), n, out);
    case ElementKind::kI64:
      return scan_i64(static_cast<const std::int64_t*>(data), n, out);
  }
}

}  // namespace regiontrace::stats
