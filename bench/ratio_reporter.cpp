#include "ratio_reporter.hpp"

#include <cstdio>

namespace regiontrace::bench {

namespace {

double find_or_zero(const std::map<std::string, double>& m, const std::string& key) {
  auto it = m.find(key);
  return it == m.end() ? 0.0 : it->second;
}

}  // namespace

void RatioReporter::ReportRuns(const std::vector<Run>& runs) {
  for (const Run& r : runs) {
    if (r.run_type != Run::RT_Iteration || r.iterations <= 0) continue;
    Figures& f = runs_[r.benchmark_name()];
    f.real_ns = r.real_accumulated_time / static_cast<double>(r.iterations) * 1e9;
    f.cpu_ns = r.GetAdjustedCPUTime();
    for (const auto& [name, c] : r.counters) {
      f.counters[name] = c.value;
      last_counters_[name] = c.value;
      if (name != "items_per_second" || c.value <= 0) continue;
      const double ns = 1e9 / c.value;
      auto [slot, fresh] = fastest_per_item_.emplace(r.run_name.function_name, ns);
      if (!fresh && ns < slot->second) slot->second = ns;
    }
  }
  ConsoleReporter::ReportRuns(runs);
}

double RatioReporter::real_ns(const std::string& name) const {
  auto it = runs_.find(name);
  return it == runs_.end() ? 0.0 : it->second.real_ns;
}

double RatioReporter::cpu_ns(const std::string& name) const {
  auto it = runs_.find(name);
  return it == runs_.end() ? 0.0 : it->second.cpu_ns;
}

double RatioReporter::counter(const std::string& name, const std::string& counter) const {
  auto it = runs_.find(name);
  return it == runs_.end() ? 0.0 : find_or_zero(it->second.counters, counter);
}

double RatioReporter::last_counter(const std::string& counter) const {
  return find_or_zero(last_counters_, counter);
}

double RatioReporter::fastest_ns_per_item(const std::string& function_name) const {
  return find_or_zero(fastest_per_item_, function_name);
}

void RatioReporter::Finalize() {
  ConsoleReporter::Finalize();
  if (comparisons_.empty()) return;
  std::map<std::string, double> ns;  // CPU time: these machines are shared
  for (const auto& [name, f] : runs_) ns[name] = f.cpu_ns;
  const auto empty = ns.find(empty_loop_);
  const double loop = empty == ns.end() ? 0.0 : empty->second;
  std::printf("\n%-44s %10s %10s %12s %10s\n", "per enter+exit pair (net of empty loop)", "ns",
              "net ns", "vs baseline", "target");
  for (const Comparison& c : comparisons_) {
    auto it = ns.find(c.name);
    if (it == ns.end()) continue;
    const double net = it->second - loop;
    std::string ratio = "-";
    auto base = c.baseline.empty() ? ns.end() : ns.find(c.baseline);
    if (base != ns.end()) {
      const double base_net = base->second - loop;
      char buf[64];
      std::snprintf(buf, sizeof(buf), "%.2fx %s", base_net > 0.05 ? net / base_net : 0.0,
                    c.baseline.c_str());
      ratio = buf;
    }
    std::string target = "-";
    char tbuf[64];
    if (c.target_ns > 0) {
      std::snprintf(tbuf, sizeof(tbuf), "<=%.1fns %s", c.target_ns,
                    net <= c.target_ns ? "ok" : "MISSED");
      target = tbuf;
    } else if (c.target_ratio > 0 && base != ns.end()) {
      const double base_net = base->second - loop;
      std::snprintf(tbuf, sizeof(tbuf), "<=%.2fx %s", c.target_ratio,
                    net <= c.target_ratio * base_net ? "ok" : "MISSED");
      target = tbuf;
    }
    std::printf("%-44s %10.2f %10.2f %12s %10s\n", c.name.c_str(), it->second, net, ratio.c_str(),
                target.c_str());
  }
  std::fflush(stdout);
}

int run_with_ratios(int argc, char** argv, std::vector<Comparison> comparisons,
                    const std::string& empty_loop) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  RatioReporter reporter(std::move(comparisons), empty_loop);
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}

}  // namespace regiontrace::bench
