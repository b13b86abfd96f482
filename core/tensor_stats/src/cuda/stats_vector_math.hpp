// What each thread of the CUDA statistics kernel does, written once for the
// device and the host: stats_kernel.cu runs it on the GPU, and
// stats_vector_emulation_test.cpp runs the very same code on the CPU in the
// kernel's thread, block and grid decomposition, so that the vector body, the
// misaligned head, the odd tail and the NaN/Inf recount are tested on
// machines without a GPU. Plain C++17 outside nvcc.
//
// Why the arithmetic is what it is (docs/activation-trace.md): every sum
// stays in double per element, because the documented agreement with the
// host loop is 1e-9 of Σ|x| and a float partial sum of even two fp32
// elements can be off by 6e-8 of them (bf16 and fp16 pairs are exact only
// when their exponents are close, which data need not be). The rest is kept
// cheap, since the loop must keep up with memory: 16-byte loads, several in
// flight; min and max in float, exact (bf16, fp16: two at a time on the
// packed words); zeros counted in integers; NaN and Inf not tested per
// element at all (see accumulate_thread); no element count (n is known).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "stats_partial.hpp"

#if defined(__CUDACC__)
#define RT_HD __host__ __device__ __forceinline__
#else
#define RT_HD inline
#endif

namespace regiontrace::stats::gpu {

// float overloads of fmin/fmax on the host too (the device has both).
using std::fabs;
using std::fma;
using std::fmax;
using std::fmin;

constexpr int kThreads = 256;     // per block
constexpr int kUnroll = 4;        // 16-byte loads in flight per thread and iteration
constexpr int kVectorBytes = 16;  // one load

// bf16 and fp16 as raw bits: the header needs no CUDA type.
struct Bf16 {
  std::uint16_t bits;
};
struct F16 {
  std::uint16_t bits;
};

// One 16-byte vector as four little-endian words.
struct Words {
  std::uint32_t w[4];
};

RT_HD float float_of_bits(std::uint32_t bits) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(bits);
#else
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
#endif
}

RT_HD double double_of_words(std::uint32_t lo, std::uint32_t hi) {
#if defined(__CUDA_ARCH__)
  return __hiloint2double(static_cast<int>(hi), static_cast<int>(lo));
#else
  const std::uint64_t bits = (static_cast<std::uint64_t>(hi) << 32) | lo;
  double d;
  std::memcpy(&d, &bits, sizeof(d));
  return d;
#endif
}

// fp16 to float is exact either way; the device has one instruction for it.
RT_HD float float_of_f16(std::uint16_t h) {
#if defined(__CUDA_ARCH__)
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
  return f;
#else
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exponent = (h >> 10) & 0x1fu;
  const std::uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24, exact in float
    const float magnitude = static_cast<float>(mantissa) * 0x1p-24f;
    return sign != 0 ? -magnitude : magnitude;
  }
  const std::uint32_t bits = exponent == 0x1f
                                 ? (sign | 0x7f800000u | (mantissa << 13))
                                 : (sign | ((exponent + 112) << 23) | (mantissa << 13));
  return float_of_bits(bits);
#endif
}

// Min and max run in `Wide`: float for the float-like types (every value
// exact), double for the rest. Only float-like types and double hold NaN/Inf.
template <typename T>
struct Element;
template <>
struct Element<float> {
  using Wide = float;
  static constexpr bool kNonFinite = true;
  RT_HD static Wide widen(float v) { return v; }
};
template <>
struct Element<Bf16> {
  using Wide = float;
  static constexpr bool kNonFinite = true;
  RT_HD static Wide widen(Bf16 v) {
    return float_of_bits(static_cast<std::uint32_t>(v.bits) << 16);
  }
};
template <>
struct Element<F16> {
  using Wide = float;
  static constexpr bool kNonFinite = true;
  RT_HD static Wide widen(F16 v) { return float_of_f16(v.bits); }
};
template <>
struct Element<double> {
  using Wide = double;
  static constexpr bool kNonFinite = true;
  RT_HD static Wide widen(double v) { return v; }
};
template <typename I>
struct IntegerElement {
  using Wide = double;
  static constexpr bool kNonFinite = false;
  RT_HD static Wide widen(I v) { return static_cast<double>(v); }  // int64: rounds as .double()
};
template <>
struct Element<std::uint8_t> : IntegerElement<std::uint8_t> {};
template <>
struct Element<std::int8_t> : IntegerElement<std::int8_t> {};
template <>
struct Element<std::int16_t> : IntegerElement<std::int16_t> {};
template <>
struct Element<std::int32_t> : IntegerElement<std::int32_t> {};
template <>
struct Element<std::int64_t> : IntegerElement<std::int64_t> {};

// One thread's sums, shifted by the tensor's first finite element.
template <typename W>
struct ThreadSums {
  double s, q, a;                   // Σd, Σd², Σ|x| with d = x - shift
  W lo, hi;                         // NaN never enters: fmin/fmax skip it
  std::uint32_t zeros, nans, infs;  // per thread: < 2^32 elements each
  std::uint32_t lo2, hi2;           // bf16/fp16 vectors: packed extremes (see PackedMinMax)
};

// packed_inf: +Inf in both 16-bit lanes (bf16, fp16); its sign bits set
// make -Inf.
template <typename W>
RT_HD ThreadSums<W> empty_thread_sums(std::uint32_t packed_inf = 0) {
  ThreadSums<W> t{};
  t.lo = std::numeric_limits<W>::infinity();
  t.hi = -std::numeric_limits<W>::infinity();
  t.lo2 = packed_inf;
  t.hi2 = packed_inf | 0x80008000u;
  return t;
}

// What a block, then the grid, accumulates: in device scratch memory.
struct Sums {
  double s, q, a, lo, hi;
  unsigned long long zeros, nans, infs;
};

RT_HD Sums empty_sums() {
  return Sums{
      0, 0, 0, std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
      0, 0, 0};
}

template <typename W>
RT_HD Sums widen_sums(const ThreadSums<W>& t) {
  return Sums{t.s,     t.q,    t.a,   static_cast<double>(t.lo), static_cast<double>(t.hi),
              t.zeros, t.nans, t.infs};
}

RT_HD void add(Sums& x, const Sums& y) {
  x.s += y.s;
  x.q += y.q;
  x.a += y.a;
  x.lo = fmin(x.lo, y.lo);
  x.hi = fmax(x.hi, y.hi);
  x.zeros += y.zeros;
  x.nans += y.nans;
  x.infs += y.infs;
}

RT_HD double shift_of(double first) {
  return std::isfinite(first) ? first : 0.0;
}

// All ones when x is zero (-0 too), else 0, subtracted from the count: on
// sm_90 a compare and a select, their results summed two at a time by IADD3
// (2.5 instructions an element where `zeros += x == 0` took 3).
RT_HD std::uint32_t zero_mask(float x) {
#if defined(__CUDA_ARCH__)
  std::uint32_t m;
  asm("set.eq.u32.f32 %0, %1, 0f00000000;" : "=r"(m) : "f"(x));
  return m;
#else
  return x == 0.0f ? 0xffffffffu : 0u;
#endif
}
RT_HD std::uint32_t zero_mask(double x) {
  return x == 0.0 ? 0xffffffffu : 0u;
}

// The per-element step of the hot loop, all but min and max. The FMA is
// explicit so that the host emulation rounds exactly as the device does.
template <typename W>
RT_HD void add_sums(ThreadSums<W>& t, W x, double shift) {
  const double xd = static_cast<double>(x);
  const double d = xd - shift;
  t.s += d;
  t.q = fma(d, d, t.q);
  t.a += fabs(xd);
  t.zeros -= zero_mask(x);
}

template <typename W>
RT_HD void add_extremes(ThreadSums<W>& t, W x) {
  t.lo = fmin(t.lo, x);
  t.hi = fmax(t.hi, x);
}

// One element read singly (head, tail, element-misaligned data).
template <typename W>
RT_HD void add_element(ThreadSums<W>& t, W x, double shift) {
  add_sums(t, x, shift);
  add_extremes(t, x);
}

// The elements of one 16-byte vector, in address order, widened.
template <typename T>
struct Unpack {
  static constexpr int kCount = kVectorBytes / static_cast<int>(sizeof(T));
  using W = typename Element<T>::Wide;
  RT_HD static void run(const Words& v, W* out) {
    // Generic: the element's bytes from the words (little-endian, as both
    // the GPU and x86/ARM hosts are).
    for (int i = 0; i < kCount; ++i) {
      T e;
      unsigned char bytes[sizeof(T)];
      for (int b = 0; b < static_cast<int>(sizeof(T)); ++b) {
        const int byte = i * static_cast<int>(sizeof(T)) + b;
        bytes[b] = static_cast<unsigned char>(v.w[byte / 4] >> (8 * (byte % 4)));
      }
      memcpy(&e, bytes, sizeof(T));
      out[i] = Element<T>::widen(e);
    }
  }
};
template <>
struct Unpack<float> {
  static constexpr int kCount = 4;
  RT_HD static void run(const Words& v, float* out) {
    for (int i = 0; i < 4; ++i) out[i] = float_of_bits(v.w[i]);
  }
};
template <>
struct Unpack<Bf16> {
  static constexpr int kCount = 8;
  RT_HD static void run(const Words& v, float* out) {
    // bf16 is the top half of a float: shift the low element up, mask the high.
    for (int i = 0; i < 4; ++i) {
      out[2 * i] = float_of_bits(v.w[i] << 16);
      out[2 * i + 1] = float_of_bits(v.w[i] & 0xffff0000u);
    }
  }
};
template <>
struct Unpack<F16> {
  static constexpr int kCount = 8;
  RT_HD static void run(const Words& v, float* out) {
    for (int i = 0; i < 4; ++i) {
      out[2 * i] = float_of_f16(static_cast<std::uint16_t>(v.w[i] & 0xffffu));
      out[2 * i + 1] = float_of_f16(static_cast<std::uint16_t>(v.w[i] >> 16));
    }
  }
};
template <>
struct Unpack<double> {
  static constexpr int kCount = 2;
  RT_HD static void run(const Words& v, double* out) {
    out[0] = double_of_words(v.w[0], v.w[1]);
    out[1] = double_of_words(v.w[2], v.w[3]);
  }
};

// Min and max of a vector's elements. bf16 and fp16 take them two at a time
// on the packed words (one HMNMX2 per pair for each, exact, NaN skipped like
// fmin/fmax), folded into the float extremes when the thread is done.
template <typename T>
struct PackedMinMax {
  static constexpr std::uint32_t kInf = 0;
  template <typename W>
  RT_HD static void run(ThreadSums<W>& t, const Words&, const W* x) {
    for (int i = 0; i < Unpack<T>::kCount; ++i) add_extremes(t, x[i]);
  }
  template <typename W>
  RT_HD static void fold(ThreadSums<W>&) {}
};

template <typename T>
struct PackedMinMax16 {
  RT_HD static float lane(std::uint32_t word, int half) {
    return Element<T>::widen(T{static_cast<std::uint16_t>(half == 0 ? word : word >> 16)});
  }
  // Lane-wise fmin/fmax of two packed words, in the element type.
  RT_HD static std::uint32_t pick(std::uint32_t a, std::uint32_t b, bool want_max) {
    std::uint32_t r = 0;
    for (int half = 0; half < 2; ++half) {
      const float x = lane(a, half), y = lane(b, half);
      const float m = want_max ? fmax(x, y) : fmin(x, y);
      const std::uint32_t bits = m == x ? a : b;  // x NaN: y, whatever y is
      r |= ((bits >> (16 * half)) & 0xffffu) << (16 * half);
    }
    return r;
  }
  template <typename W>
  RT_HD static void fold(ThreadSums<W>& t) {
    for (int half = 0; half < 2; ++half) {
      t.lo = fmin(t.lo, lane(t.lo2, half));
      t.hi = fmax(t.hi, lane(t.hi2, half));
    }
  }
};

template <>
struct PackedMinMax<Bf16> : PackedMinMax16<Bf16> {
  static constexpr std::uint32_t kInf = 0x7f807f80u;  // +Inf in both lanes
  template <typename W>
  RT_HD static void run(ThreadSums<W>& t, const Words& v, const W*) {
    for (int i = 0; i < 4; ++i) {
#if defined(__CUDA_ARCH__)
      asm("min.bf16x2 %0, %0, %1;" : "+r"(t.lo2) : "r"(v.w[i]));
      asm("max.bf16x2 %0, %0, %1;" : "+r"(t.hi2) : "r"(v.w[i]));
#else
      t.lo2 = pick(t.lo2, v.w[i], false);
      t.hi2 = pick(t.hi2, v.w[i], true);
#endif
    }
  }
};
template <>
struct PackedMinMax<F16> : PackedMinMax16<F16> {
  static constexpr std::uint32_t kInf = 0x7c007c00u;
  template <typename W>
  RT_HD static void run(ThreadSums<W>& t, const Words& v, const W*) {
    for (int i = 0; i < 4; ++i) {
#if defined(__CUDA_ARCH__)
      asm("min.f16x2 %0, %0, %1;" : "+r"(t.lo2) : "r"(v.w[i]));
      asm("max.f16x2 %0, %0, %1;" : "+r"(t.hi2) : "r"(v.w[i]));
#else
      t.lo2 = pick(t.lo2, v.w[i], false);
      t.hi2 = pick(t.hi2, v.w[i], true);
#endif
    }
  }
};

// `count` vectors (1 or kUnroll). Float-like ones interleaved: element i of
// every vector before element i + 1 of any, so that the first additions need
// every load and the compiler cannot sink later loads below earlier vectors'
// work (it did: two of four loads in flight instead of four). The rest
// (fp64, integers: not this kernel's hot types) a vector at a time, which
// keeps their widened doubles in registers.
template <typename T, int kCount>
RT_HD void add_vectors(ThreadSums<typename Element<T>::Wide>& t, const Words* v, double shift) {
  using W = typename Element<T>::Wide;
  constexpr int kEach = Unpack<T>::kCount;
  if constexpr (std::is_same_v<W, float>) {
    W x[kCount][kEach];
    for (int j = 0; j < kCount; ++j) Unpack<T>::run(v[j], x[j]);
    for (int i = 0; i < kEach; ++i) {
      for (int j = 0; j < kCount; ++j) add_sums(t, x[j][i], shift);
    }
    for (int j = 0; j < kCount; ++j) PackedMinMax<T>::run(t, v[j], x[j]);
  } else {
    for (int j = 0; j < kCount; ++j) {
      W x[kEach];
      Unpack<T>::run(v[j], x);
      for (int i = 0; i < kEach; ++i) add_sums(t, x[i], shift);
      PackedMinMax<T>::run(t, v[j], x);
    }
  }
}

// How data[0, n) splits: `head` elements before the first 16-byte boundary,
// `vectors` whole 16-byte vectors, the rest a tail. A base that is not even
// element-aligned reads every element singly (the head is everything).
struct Layout {
  std::int64_t head, vectors, tail_begin;
};

RT_HD Layout layout_of(std::uintptr_t address, std::int64_t n, int element_size) {
  Layout l;
  if (address % static_cast<std::uintptr_t>(element_size) != 0) {
    l.head = n;
  } else {
    const std::uintptr_t misalignment = address % kVectorBytes;
    l.head = misalignment == 0
                 ? 0
                 : static_cast<std::int64_t>((kVectorBytes - misalignment) /
                                             static_cast<std::uintptr_t>(element_size));
    if (l.head > n) l.head = n;
  }
  l.vectors = (n - l.head) / (kVectorBytes / element_size);
  l.tail_begin = l.head + l.vectors * (kVectorBytes / element_size);
  return l;
}

template <typename T>
RT_HD T load_element(const T* p) {
#if defined(__CUDA_ARCH__)
  if constexpr (sizeof(T) == 2) {
    std::uint16_t bits = __ldg(reinterpret_cast<const unsigned short*>(p));
    T e;
    memcpy(&e, &bits, 2);
    return e;
  } else {
    return __ldg(p);
  }
#else
  T e;
  std::memcpy(&e, p, sizeof(T));
  return e;
#endif
}

RT_HD Words load_vector(const Words* p) {
#if defined(__CUDA_ARCH__)
  const uint4 v = __ldg(reinterpret_cast<const uint4*>(p));
  return Words{{v.x, v.y, v.z, v.w}};
#else
  Words v;
  std::memcpy(&v, p, sizeof(v));
  return v;
#endif
}

// The shift every thread uses: the first element when finite (read by all,
// so the partial sums simply add).
template <typename T>
RT_HD double shift_for(const T* data) {
  return shift_of(static_cast<double>(Element<T>::widen(load_element(data))));
}

// Thread `thread` of `threads` in the grid: its elements of the head, its
// vectors (grid-stride, kUnroll independent coalesced loads per iteration:
// vector thread + j * threads of each chunk), its elements of the tail.
//
// NaN and Inf are not tested per element: Σ|x| is finite exactly when every
// element the thread read is (for fp32, bf16, fp16 it cannot overflow:
// 2^40 elements of at most 3.4e38), so a thread whose Σ|x| is not finite
// reads its elements once more to count them. Only tensors holding NaN or Inf
// (or fp64 data near overflow) pay for the second read, and only in the
// threads that saw one. Everything else about NaN and Inf follows from the
// sums themselves, as in the host loop.
template <typename T>
RT_HD ThreadSums<typename Element<T>::Wide> accumulate_thread(const T* data, std::int64_t n,
                                                              double shift, std::int64_t thread,
                                                              std::int64_t threads) {
  using W = typename Element<T>::Wide;
  const Layout l = layout_of(reinterpret_cast<std::uintptr_t>(data), n, sizeof(T));
  const Words* body = reinterpret_cast<const Words*>(data + l.head);
  ThreadSums<W> t = empty_thread_sums<W>(PackedMinMax<T>::kInf);
  for (std::int64_t i = thread; i < l.head; i += threads) {
    add_element(t, Element<T>::widen(load_element(data + i)), shift);
  }
  std::int64_t v = thread;
  for (; v + (kUnroll - 1) * threads < l.vectors; v += kUnroll * threads) {
    Words x[kUnroll];
    for (int j = 0; j < kUnroll; ++j) x[j] = load_vector(body + v + j * threads);
    add_vectors<T, kUnroll>(t, x, shift);
  }
  for (; v < l.vectors; v += threads) {
    const Words x = load_vector(body + v);
    add_vectors<T, 1>(t, &x, shift);
  }
  for (std::int64_t i = l.tail_begin + thread; i < n; i += threads) {
    add_element(t, Element<T>::widen(load_element(data + i)), shift);
  }
  PackedMinMax<T>::fold(t);
  if (Element<T>::kNonFinite && !std::isfinite(t.a)) {
    // Rare: the same elements again (in any order: counts only).
    const auto count = [&t](W x) {
      t.nans += x != x ? 1u : 0u;
      t.infs +=
          (x == std::numeric_limits<W>::infinity() || x == -std::numeric_limits<W>::infinity())
              ? 1u
              : 0u;
    };
    for (std::int64_t i = thread; i < l.head; i += threads) {
      count(Element<T>::widen(load_element(data + i)));
    }
    for (std::int64_t u = thread; u < l.vectors; u += threads) {
      W x[Unpack<T>::kCount];
      Unpack<T>::run(load_vector(body + u), x);
      for (int i = 0; i < Unpack<T>::kCount; ++i) count(x[i]);
    }
    for (std::int64_t i = l.tail_begin + thread; i < n; i += threads) {
      count(Element<T>::widen(load_element(data + i)));
    }
  }
  return t;
}

// The grid's total as a Partial (what the host loop's blocks merge into).
// Explicit FMAs: the device would contract these expressions anyway, and the
// host emulation must round the same way.
RT_HD Partial finish_sums(const Sums& m, std::int64_t n, double k) {
  const double dn = static_cast<double>(n);
  Partial r;
  r.n = n;
  r.sum = fma(dn, k, m.s);
  r.mean = k + m.s / dn;
  r.m2 = fmax(fma(-m.s, m.s / dn, m.q), 0.0);
  r.sumsq = fma(dn * k, k, fma(2.0 * k, m.s, m.q));
  r.abs_sum = m.a;
  r.min = m.lo;
  r.max = m.hi;
  r.zeros = static_cast<double>(m.zeros);
  r.nans = static_cast<std::int64_t>(m.nans);
  r.infs = static_cast<std::int64_t>(m.infs);
  // Σx² as torch gets it: NaN with any NaN, else +Inf with any Inf.
  if (m.nans > 0) {
    r.sumsq = std::numeric_limits<double>::quiet_NaN();
  } else if (m.infs > 0) {
    r.sumsq = std::numeric_limits<double>::infinity();
  }
  return r;
}

}  // namespace regiontrace::stats::gpu
