#include "ratio_reporter.hpp"

#include <utility>

#include <algorithm>
#include <cstdio>

namespace regiontrace::bench {

namespace {

Spread spread_of(std::vector<double> v) {
  Spread s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.min = v.front();
  s.max = v.back();
  const std::size_t n = v.size();
  s.median = n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  s.count = static_cast<int>(n);
  return s;
}

// Three significant digits or so, never in exponent form: the table is read
// by people comparing runs.
std::string number(double v) {
  char buf[64];
  const double a = v < 0 ? -v : v;
  std::snprintf(buf, sizeof(buf), a >= 100 ? "%.0f" : a >= 10 ? "%.1f" : "%.2f", v);
  return buf;
}

double find_or_zero(const std::map<std::string, double>& m, const std::string& key) {
  auto it = m.find(key);
  return it == m.end() ? 0.0 : it->second;
}

}  // namespace

double verdict_ratio(const Verdict& v) {
  return v.baseline.empty() || v.baseline_min <= 0 ? 0.0 : v.min / v.baseline_min;
}

bool verdict_ok(const Verdict& v) {
  const double r = verdict_ratio(v);
  switch (v.goal) {
    case Verdict::Goal::kNone:
      return true;
    case Verdict::Goal::kAtMost:
      return v.min <= v.target;
    case Verdict::Goal::kAtLeast:
      return v.min >= v.target;
    case Verdict::Goal::kRatioAtMost:
      return r > 0 && r <= v.target;
    case Verdict::Goal::kRatioAtLeast:
      return r >= v.target;
  }
  return false;
}

std::string format_verdict(const Verdict& v) {
  std::string line = "VERDICT | " + v.name + " | " + number(v.min) + " " + v.unit;
  if (v.median > 0) line += " (median " + number(v.median) + ")";
  line += " | ";
  line += v.baseline.empty() ? "-" : v.baseline + " " + number(v.baseline_min) + " " + v.unit;
  line += " | ";
  const double r = verdict_ratio(v);
  line += r > 0 ? number(r) + "x" : "-";
  line += " | ";
  switch (v.goal) {
    case Verdict::Goal::kNone:
      line += "-";
      break;
    case Verdict::Goal::kAtMost:
      line += "<= " + number(v.target) + " " + v.unit;
      break;
    case Verdict::Goal::kAtLeast:
      line += ">= " + number(v.target) + " " + v.unit;
      break;
    case Verdict::Goal::kRatioAtMost:
      line += "<= " + number(v.target) + "x";
      break;
    case Verdict::Goal::kRatioAtLeast:
      line += ">= " + number(v.target) + "x";
      break;
  }
  line += " | ";
  line += v.goal == Verdict::Goal::kNone ? "-" : verdict_ok(v) ? "ok" : "MISS";
  return line;
}

void print_verdict(const Verdict& v) {
  std::printf("%s\n", format_verdict(v).c_str());
  std::fflush(stdout);
}

void print_verdict(std::string name, std::string unit, double figure, Verdict::Goal goal,
                   double target, std::string baseline, double baseline_figure) {
  Verdict v;
  v.name = std::move(name);
  v.unit = std::move(unit);
  v.min = figure;
  v.goal = goal;
  v.target = target;
  v.baseline = std::move(baseline);
  v.baseline_min = baseline_figure;
  print_verdict(v);
}

void RatioReporter::ReportRuns(const std::vector<Run>& runs) {
  for (const Run& r : runs) {
    if (r.run_type != Run::RT_Iteration || r.iterations <= 0) continue;
    Figures& f = runs_[r.benchmark_name()];
    f.real_ns.push_back(r.real_accumulated_time / static_cast<double>(r.iterations) * 1e9);
    // GetAdjustedCPUTime() is in the benchmark's display unit, not ns.
    f.cpu_ns.push_back(r.cpu_accumulated_time / static_cast<double>(r.iterations) * 1e9);
    for (const auto& [name, c] : r.counters) {
      f.counters[name].push_back(c.value);
      last_counters_[name] = c.value;
      if (name != "items_per_second" || c.value <= 0) continue;
      const double ns = 1e9 / c.value;
      auto [slot, fresh] = fastest_per_item_.emplace(r.run_name.function_name, ns);
      if (!fresh && ns < slot->second) slot->second = ns;
    }
  }
  ConsoleReporter::ReportRuns(runs);
}

Spread RatioReporter::real_spread(const std::string& name) const {
  auto it = runs_.find(name);
  return it == runs_.end() ? Spread{} : spread_of(it->second.real_ns);
}

Spread RatioReporter::cpu_spread(const std::string& name) const {
  auto it = runs_.find(name);
  return it == runs_.end() ? Spread{} : spread_of(it->second.cpu_ns);
}

Spread RatioReporter::counter_spread(const std::string& name, const std::string& counter) const {
  auto it = runs_.find(name);
  if (it == runs_.end()) return {};
  auto c = it->second.counters.find(counter);
  return c == it->second.counters.end() ? Spread{} : spread_of(c->second);
}

Spread RatioReporter::ns_per_item_spread(const std::string& name) const {
  auto it = runs_.find(name);
  if (it == runs_.end()) return {};
  auto c = it->second.counters.find("items_per_second");
  if (c == it->second.counters.end()) return {};
  std::vector<double> ns;
  for (double per_second : c->second) {
    if (per_second > 0) ns.push_back(1e9 / per_second);
  }
  return spread_of(ns);
}

double RatioReporter::real_ns(const std::string& name) const {
  return real_spread(name).min;
}

double RatioReporter::cpu_ns(const std::string& name) const {
  return cpu_spread(name).min;
}

double RatioReporter::counter(const std::string& name, const std::string& counter) const {
  auto it = runs_.find(name);
  if (it == runs_.end()) return 0.0;
  auto c = it->second.counters.find(counter);
  return c == it->second.counters.end() || c->second.empty() ? 0.0 : c->second.back();
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
  // CPU time, net of the empty loop: these machines are shared.
  const Spread loop = cpu_spread(empty_loop_);
  std::printf("\nper iteration, CPU ns net of %s (%s ns):\n", empty_loop_.c_str(),
              number(loop.min).c_str());
  for (const Comparison& c : comparisons_) {
    const Spread s = cpu_spread(c.name);
    if (s.count == 0) continue;
    Verdict v;
    v.name = c.name;
    v.min = s.min - loop.min;
    v.median = s.median - loop.median;
    const Spread base = c.baseline.empty() ? Spread{} : cpu_spread(c.baseline);
    if (base.count > 0) {
      v.baseline = c.baseline;
      v.baseline_min = base.min - loop.min;
    }
    if (c.target_ns > 0) {
      v.goal = Verdict::Goal::kAtMost;
      v.target = c.target_ns;
    } else if (c.target_ratio > 0 && base.count > 0) {
      v.goal = Verdict::Goal::kRatioAtMost;
      v.target = c.target_ratio;
    }
    print_verdict(v);
  }
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
