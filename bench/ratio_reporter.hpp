// A console reporter that also prints, after the usual table, each
// benchmark's time per iteration against a named baseline from the same run.
#pragma once

#include <benchmark/benchmark.h>

#include <map>
#include <string>
#include <vector>

namespace regiontrace::bench {

struct Comparison {
  std::string name;         // benchmark name
  std::string baseline;     // benchmark name it is compared with ("" = none)
  double target_ns = 0;     // net ns per iteration it should stay under (0 = none)
  double target_ratio = 0;  // or ratio to the baseline it should stay under (0 = none)
};

class RatioReporter : public benchmark::ConsoleReporter {
 public:
  explicit RatioReporter(std::vector<Comparison> comparisons, std::string empty_loop)
      : comparisons_(std::move(comparisons)), empty_loop_(std::move(empty_loop)) {}
  void ReportRuns(const std::vector<Run>& runs) override;
  void Finalize() override;

 private:
  std::vector<Comparison> comparisons_;
  std::string empty_loop_;
  std::map<std::string, double> ns_;  // name -> ns per iteration
};

// Runs the registered benchmarks with the reporter; returns main's exit code.
int run_with_ratios(int argc, char** argv, std::vector<Comparison> comparisons,
                    const std::string& empty_loop);

}  // namespace regiontrace::bench
