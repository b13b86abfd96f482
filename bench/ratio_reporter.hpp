// The one console reporter of regiontrace's benchmarks (core, and each
// sink's bench links it as regiontrace_bench_support): it prints the usual
// table, keeps every run's figures for the ratios a benchmark is judged by,
// and, given comparisons, prints each benchmark's time per iteration
// against a named baseline from the same run. Benchmarks that print their
// own ratios read the kept figures (real_ns, counter, fastest_ns_per_item)
// instead of writing a reporter of their own.
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
  // Keeps the figures only; prints no comparison table.
  RatioReporter() = default;
  explicit RatioReporter(std::vector<Comparison> comparisons, std::string empty_loop)
      : comparisons_(std::move(comparisons)), empty_loop_(std::move(empty_loop)) {}
  void ReportRuns(const std::vector<Run>& runs) override;
  void Finalize() override;

  // Wall-clock ns per iteration of a benchmark (full name), 0 when absent.
  double real_ns(const std::string& name) const;
  // CPU ns per iteration (what the comparison table uses: machines are
  // shared), 0 when absent.
  double cpu_ns(const std::string& name) const;
  // A user counter of a benchmark (full name), 0 when absent.
  double counter(const std::string& name, const std::string& counter) const;
  // The last value any benchmark reported for a counter, 0 when none: for
  // counters that one benchmark measures for several (interleaved) loops.
  double last_counter(const std::string& counter) const;
  // 1e9 / items_per_second of the fastest repetition of a benchmark
  // function (name without arguments), 0 when absent.
  double fastest_ns_per_item(const std::string& function_name) const;

 private:
  struct Figures {
    double real_ns = 0;
    double cpu_ns = 0;
    std::map<std::string, double> counters;
  };
  std::vector<Comparison> comparisons_;
  std::string empty_loop_;
  std::map<std::string, Figures> runs_;             // full name -> figures
  std::map<std::string, double> last_counters_;     // counter -> last value
  std::map<std::string, double> fastest_per_item_;  // function name -> ns
};

// Runs the registered benchmarks with the reporter; returns main's exit code.
int run_with_ratios(int argc, char** argv, std::vector<Comparison> comparisons,
                    const std::string& empty_loop);

}  // namespace regiontrace::bench
