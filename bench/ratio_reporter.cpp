#include "ratio_reporter.hpp"

#include <cstdio>

namespace regiontrace::bench {

void RatioReporter::ReportRuns(const std::vector<Run>& runs) {
  for (const Run& r : runs) {
    if (r.run_type == Run::RT_Iteration && r.iterations > 0) {
      ns_[r.benchmark_name()] = r.GetAdjustedCPUTime();  // CPU time: these machines are shared
    }
  }
  ConsoleReporter::ReportRuns(runs);
}

void RatioReporter::Finalize() {
  ConsoleReporter::Finalize();
  const auto empty = ns_.find(empty_loop_);
  const double loop = empty == ns_.end() ? 0.0 : empty->second;
  std::printf("\n%-44s %10s %10s %12s %10s\n", "per enter+exit pair (net of empty loop)", "ns",
              "net ns", "vs baseline", "target");
  for (const Comparison& c : comparisons_) {
    auto it = ns_.find(c.name);
    if (it == ns_.end()) continue;
    const double net = it->second - loop;
    std::string ratio = "-";
    auto base = c.baseline.empty() ? ns_.end() : ns_.find(c.baseline);
    if (base != ns_.end()) {
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
    } else if (c.target_ratio > 0 && base != ns_.end()) {
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
