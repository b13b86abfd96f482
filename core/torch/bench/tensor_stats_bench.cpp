// Fused statistics against the baselines, in the same run, on 16M elements:
//   one sum() pass                      (target: fused <= 2x)
//   one reduction + .item() per stat    (target: fused >= 10x faster)
// and observe() with nobody listening (target: <= 2 ns). For bf16 it also
// measures the floors of any exact pass (the least ALU work of one
// double-precision sum, the three double sums the statistics need, and a
// plain read of the bytes) and reports the fused pass against them.
// Ratios are printed after the table.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

#include "ratio_reporter.hpp"
#include "regiontrace/tensor_stats.hpp"
#include "regiontrace/torch.hpp"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // GCC 12 intrinsics (bug 105593)
#include <immintrin.h>
#pragma GCC diagnostic pop
#define RT_BENCH_AVX512 1
#endif

namespace {

constexpr std::int64_t kElements = 16 * 1024 * 1024;

const at::Tensor& input(at::ScalarType type) {
  static std::map<at::ScalarType, at::Tensor> cache;
  auto it = cache.find(type);
  if (it == cache.end()) {
    at::manual_seed(0);
    it = cache.emplace(type, at::randn({kElements}, at::kFloat).to(type)).first;
  }
  return it->second;
}

at::ScalarType type_of(const benchmark::State& state) {
  return state.range(0) == 0 ? at::kFloat : at::kBFloat16;
}

void BM_Fused(benchmark::State& state) {
  const at::Tensor& t = input(type_of(state));
  for (auto _ : state) {
    regiontrace::TensorStats s = regiontrace::compute_stats(t);
    benchmark::DoNotOptimize(s.sum);
  }
  state.SetBytesProcessed(state.iterations() * t.nbytes());
}

void BM_SumPass(benchmark::State& state) {
  const at::Tensor& t = input(type_of(state));
  for (auto _ : state) {
    double s = t.sum().item<double>();
    benchmark::DoNotOptimize(s);
  }
  state.SetBytesProcessed(state.iterations() * t.nbytes());
}

// What a Python hook does: one reduction and one .item() per statistic.
void BM_PerStatistic(benchmark::State& state) {
  const at::Tensor& t = input(type_of(state));
  for (auto _ : state) {
    double acc = 0;
    acc += t.sum().item<double>();
    acc += t.mean().item<double>();
    acc += t.abs().mean().item<double>();
    acc += t.min().item<double>();
    acc += t.max().item<double>();
    acc += t.abs().max().item<double>();
    acc += t.std().item<double>();
    acc += t.pow(2).mean().sqrt().item<double>();
    acc += t.norm().item<double>();
    acc += t.isnan().sum().item<double>();
    acc += t.isinf().sum().item<double>();
    acc += t.eq(0).sum().item<double>();
    benchmark::DoNotOptimize(acc);
  }
  state.SetBytesProcessed(state.iterations() * t.nbytes());
}

void BM_ObserveNoListener(benchmark::State& state) {
  const at::Tensor t = at::ones({4});
  for (auto _ : state) {
    regiontrace::observe("out", t);
    benchmark::ClobberMemory();
  }
}

// Baseline for the loop itself: the same loop with nothing in it.
void BM_EmptyLoop(benchmark::State& state) {
  for (auto _ : state) benchmark::ClobberMemory();
}

#if defined(RT_BENCH_AVX512)
// The limits of the bf16 path on this machine, measured beside it.
#define RT_AVX512 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl"), noinline))

// ALU floor: the least one double-precision sum of bf16 needs, per 32
// elements: widen to float (mask, shift: 2 uops), split (2), widen to double
// (4 x 2), add (4): 16 uops on the two 512-bit ports, 8 cycles.
RT_AVX512 double widen_and_add(const std::uint16_t* p, std::int64_t n) {
  const __m512i odd_mask = _mm512_set1_epi32(static_cast<int>(0xffff0000u));
  __m512d s[4];
  for (auto& x : s) x = _mm512_setzero_pd();
  for (std::int64_t i = 0; i + 32 <= n; i += 32) {
    __builtin_prefetch(reinterpret_cast<const char*>(p + i) + 4096);
    const __m512i v = _mm512_loadu_si512(p + i);
    const __m512 even = _mm512_castsi512_ps(_mm512_slli_epi32(v, 16));
    const __m512 odd = _mm512_castsi512_ps(_mm512_and_si512(v, odd_mask));
    s[0] = _mm512_add_pd(s[0], _mm512_cvtps_pd(_mm512_castps512_ps256(even)));
    s[1] = _mm512_add_pd(s[1], _mm512_cvtps_pd(_mm512_extractf32x8_ps(even, 1)));
    s[2] = _mm512_add_pd(s[2], _mm512_cvtps_pd(_mm512_castps512_ps256(odd)));
    s[3] = _mm512_add_pd(s[3], _mm512_cvtps_pd(_mm512_extractf32x8_ps(odd, 1)));
  }
  return _mm512_reduce_add_pd(_mm512_add_pd(_mm512_add_pd(s[0], s[1]), _mm512_add_pd(s[2], s[3])));
}

// Arithmetic floor of the exact statistics: Σx, Σx² and the sum of the
// negative elements (for Σ|x|) in double, as the fused pass takes them, with
// no min, max or zero count: per 32 elements, widen (2 uops), split (2),
// sign masks (2), and per 8 doubles widen (2), add, FMA, masked add (5):
// 26 uops, 13 cycles on the two 512-bit ports.
RT_AVX512 double three_double_sums(const std::uint16_t* p, std::int64_t n) {
  const __m512i odd_mask = _mm512_set1_epi32(static_cast<int>(0xffff0000u));
  __m512d s[4], q[4], neg[4];
  for (int g = 0; g < 4; ++g) s[g] = q[g] = neg[g] = _mm512_setzero_pd();
  for (std::int64_t i = 0; i + 32 <= n; i += 32) {
    __builtin_prefetch(reinterpret_cast<const char*>(p + i) + 4096);
    const __m512i v = _mm512_loadu_si512(p + i);
    const __m512i even_bits = _mm512_slli_epi32(v, 16);
    const __m512 even = _mm512_castsi512_ps(even_bits);
    const __m512 odd = _mm512_castsi512_ps(_mm512_and_si512(v, odd_mask));
    const __mmask16 even_neg = _mm512_movepi32_mask(even_bits);
    const __mmask16 odd_neg = _mm512_movepi32_mask(v);
    const __m256 halves[4] = {_mm512_castps512_ps256(even), _mm512_extractf32x8_ps(even, 1),
                              _mm512_castps512_ps256(odd), _mm512_extractf32x8_ps(odd, 1)};
    const __mmask8 negative[4] = {
        static_cast<__mmask8>(even_neg), static_cast<__mmask8>(even_neg >> 8),
        static_cast<__mmask8>(odd_neg), static_cast<__mmask8>(odd_neg >> 8)};
    // Unrolled, as the library's -O3 does: the accumulators stay in registers.
#pragma GCC unroll 4
    for (int g = 0; g < 4; ++g) {
      const __m512d x = _mm512_cvtps_pd(halves[g]);
      s[g] = _mm512_add_pd(s[g], x);
      q[g] = _mm512_fmadd_pd(x, x, q[g]);
      neg[g] = _mm512_mask_add_pd(neg[g], negative[g], neg[g], x);
    }
  }
  __m512d all = _mm512_setzero_pd();
  for (int g = 0; g < 4; ++g)
    all = _mm512_add_pd(all, _mm512_add_pd(s[g], _mm512_add_pd(q[g], neg[g])));
  return _mm512_reduce_add_pd(all);
}

// Memory floor: every 64-byte line read once, one OR each.
RT_AVX512 std::uint32_t read_all(const std::uint16_t* p, std::int64_t n) {
  __m512i a = _mm512_setzero_si512(), b = a;
  for (std::int64_t i = 0; i + 64 <= n; i += 64) {
    a = _mm512_or_si512(a, _mm512_loadu_si512(p + i));
    b = _mm512_or_si512(b, _mm512_loadu_si512(p + i + 32));
  }
  return static_cast<std::uint32_t>(_mm512_reduce_or_epi32(_mm512_or_si512(a, b)));
}

bool has_avx512() {
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
}

const std::uint16_t* bf16_bits(const at::Tensor& t) {
  return static_cast<const std::uint16_t*>(t.data_ptr());
}

void BM_Bf16WidenAndAdd(benchmark::State& state) {
  if (!has_avx512()) return state.SkipWithError("no AVX-512");
  const at::Tensor& t = input(at::kBFloat16);
  for (auto _ : state) benchmark::DoNotOptimize(widen_and_add(bf16_bits(t), t.numel()));
  state.SetBytesProcessed(state.iterations() * t.nbytes());
}

void BM_Bf16ThreeDoubleSums(benchmark::State& state) {
  if (!has_avx512()) return state.SkipWithError("no AVX-512");
  const at::Tensor& t = input(at::kBFloat16);
  for (auto _ : state) benchmark::DoNotOptimize(three_double_sums(bf16_bits(t), t.numel()));
  state.SetBytesProcessed(state.iterations() * t.nbytes());
}

void BM_Bf16Read(benchmark::State& state) {
  if (!has_avx512()) return state.SkipWithError("no AVX-512");
  const at::Tensor& t = input(at::kBFloat16);
  for (auto _ : state) benchmark::DoNotOptimize(read_all(bf16_bits(t), t.numel()));
  state.SetBytesProcessed(state.iterations() * t.nbytes());
}
#endif

BENCHMARK(BM_Fused)->Arg(0)->Arg(1)->ArgName("bf16")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_SumPass)
    ->Arg(0)
    ->Arg(1)
    ->ArgName("bf16")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_PerStatistic)
    ->Arg(0)
    ->Arg(1)
    ->ArgName("bf16")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
#if defined(RT_BENCH_AVX512)
BENCHMARK(BM_Bf16WidenAndAdd)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Bf16ThreeDoubleSums)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Bf16Read)->Unit(benchmark::kMillisecond)->UseRealTime();
#endif
BENCHMARK(BM_ObserveNoListener);
BENCHMARK(BM_EmptyLoop);

// Keeps each run's time per iteration (ns) for the ratios.

}  // namespace

int main(int argc, char** argv) {
  using regiontrace::bench::Verdict;
  // One intra-op thread unless OMP_NUM_THREADS says otherwise: the targets
  // are per thread, and on one thread CPU time (immune to other programs'
  // turns on a shared machine) is the whole cost.
  if (std::getenv("OMP_NUM_THREADS") == nullptr) at::set_num_threads(1);
  const bool one_thread = at::get_num_threads() == 1;
  benchmark::Initialize(&argc, argv);
  regiontrace::bench::RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  const auto ms = [&reporter, one_thread](const std::string& name) {
    auto s = one_thread ? reporter.cpu_spread(name) : reporter.real_spread(name);
    s.min /= 1e6;
    s.median /= 1e6;
    return s;
  };
  const char* kinds[2][2] = {{"fp32", "bf16:0"}, {"bf16", "bf16:1"}};
  std::printf("\n16M elements, %d intra-op threads (%s time)\n", at::get_num_threads(),
              one_thread ? "CPU" : "wall");
  for (const auto& k : kinds) {
    const std::string suffix = std::string("/") + k[1] + "/real_time";
    const auto fused = ms("BM_Fused" + suffix);
    const auto sum = ms("BM_SumPass" + suffix);
    const auto per = ms("BM_PerStatistic" + suffix);
    if (fused.count == 0 || sum.count == 0) continue;
    Verdict v;
    v.name = std::string(k[0]) + " fused statistics";
    v.unit = "ms";
    v.min = fused.min;
    v.median = fused.median;
    v.baseline = "sum()";
    v.baseline_min = sum.min;
    v.goal = Verdict::Goal::kRatioAtMost;
    v.target = 2.0;
    regiontrace::bench::print_verdict(v);
    if (per.count == 0) continue;
    Verdict p;
    p.name = std::string(k[0]) + " one reduction per statistic";
    p.unit = "ms";
    p.min = per.min;
    p.median = per.median;
    p.baseline = "fused";
    p.baseline_min = fused.min;
    p.goal = Verdict::Goal::kRatioAtLeast;
    p.target = 10.0;
    regiontrace::bench::print_verdict(p);
  }
  // Where bf16 stands against this machine's limits (reported, not judged):
  // the floors, and the fused pass against each.
  const auto floor_alu = ms("BM_Bf16WidenAndAdd/real_time");
  const auto floor_sums = ms("BM_Bf16ThreeDoubleSums/real_time");
  const auto floor_mem = ms("BM_Bf16Read/real_time");
  const auto fused_bf16 = ms("BM_Fused/bf16:1/real_time");
  const double bytes = static_cast<double>(kElements) * 2;
  const auto in_ms = [](std::string name, const regiontrace::bench::Spread& spread) {
    Verdict v;
    v.name = std::move(name);
    v.unit = "ms";
    v.min = spread.min;
    v.median = spread.median;
    return v;
  };
  const auto report = [&](const char* name, const regiontrace::bench::Spread& floor) {
    if (floor.count == 0) return;
    regiontrace::bench::print_verdict(in_ms(std::string("bf16 floor: ") + name, floor));
    regiontrace::bench::print_verdict(std::string("bf16 floor: ") + name + ", read rate", "GB/s",
                                      bytes / (floor.min * 1e6));
    if (fused_bf16.count == 0) return;
    Verdict f = in_ms(std::string("bf16 fused statistics against ") + name, fused_bf16);
    f.baseline = name;
    f.baseline_min = floor.min;
    regiontrace::bench::print_verdict(f);
  };
  report("widen to double and add (ALU)", floor_alu);
  report("three exact sums in double, no min/max/zeros (ALU)", floor_sums);
  // The arithmetic the exact statistics cannot do without, against the
  // sum() they are judged by (which accumulates bf16 in float).
  const auto sum_bf16 = ms("BM_SumPass/bf16:1/real_time");
  if (floor_sums.count > 0 && sum_bf16.count > 0) {
    Verdict f = in_ms("bf16 floor: three exact sums in double against sum()", floor_sums);
    f.baseline = "sum()";
    f.baseline_min = sum_bf16.min;
    regiontrace::bench::print_verdict(f);
  }
  report("read the 32 MB (memory)", floor_mem);
  const auto observe = reporter.real_spread("BM_ObserveNoListener");
  if (observe.count > 0) {
    Verdict v;
    v.name = "observe() with no listener";
    v.min = observe.min;
    v.median = observe.median;
    v.baseline = "empty loop";
    v.baseline_min = reporter.real_ns("BM_EmptyLoop");
    v.goal = Verdict::Goal::kAtMost;
    v.target = 2.0;
    regiontrace::bench::print_verdict(v);
  }
  return 0;
}
