// Fused statistics against the baselines, in the same run, on 16M elements:
//   one sum() pass                      (target: fused <= 2x)
//   one reduction + .item() per stat    (target: fused >= 10x faster)
// and observe() with nobody listening (target: <= 2 ns).
// Ratios are printed after the table.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <benchmark/benchmark.h>

#include <cstdio>
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
  benchmark::Initialize(&argc, argv);
  regiontrace::bench::RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  const auto ns = [&reporter](const std::string& name) { return reporter.real_ns(name); };
  const char* kinds[2][2] = {{"fp32", "bf16:0"}, {"bf16", "bf16:1"}};
  std::printf("\n16M elements, %d intra-op threads\n", at::get_num_threads());
  for (const auto& k : kinds) {
    const std::string suffix = std::string("/") + k[1] + "/real_time";
    const double fused = ns("BM_Fused" + suffix);
    const double sum = ns("BM_SumPass" + suffix);
    const double per = ns("BM_PerStatistic" + suffix);
    if (fused <= 0 || sum <= 0 || per <= 0) continue;
    std::printf("%s: fused %.2f ms, sum() %.2f ms, per-statistic %.2f ms\n", k[0], fused / 1e6,
                sum / 1e6, per / 1e6);
    std::printf(
        "%s: fused / sum() = %.2fx (target <= 2x); per-statistic / fused = %.1fx "
        "(target >= 10x); per-statistic / sum() = %.1fx\n",
        k[0], fused / sum, per / fused, per / sum);
  }
  const double observe = ns("BM_ObserveNoListener"), empty = ns("BM_EmptyLoop");
  if (observe > 0) {
    std::printf(
        "observe() with no listener: %.2f ns per call (empty loop %.2f ns; target <= 2 ns)\n",
        observe, empty);
  }
  return 0;
}
