// Fused statistics against the baselines, in the same run, on 16M elements:
//   one sum() pass                      (target: fused <= 2x)
//   one reduction + .item() per stat    (target: fused >= 10x faster)
// and observe() with nobody listening (target: <= 2 ns).
// Ratios are printed after the table.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

#include "ratio_reporter.hpp"
#include "regiontrace/tensor_stats.hpp"
#include "regiontrace/torch.hpp"

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
