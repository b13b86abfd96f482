// The one console reporter of regiontrace's benchmarks (core, and each
// sink's bench links it as regiontrace_bench_support): it prints the usual
// table, keeps every repetition's figures for the ratios a benchmark is
// judged by, and prints each judged figure as one verdict line:
//
//   VERDICT | name | min (median) unit | baseline | ratio | target | ok
//
// scripts/bench.sh collects those lines from every bench program into
// bench/results.md, so every program must print its verdicts through
// print_verdict (or the comparisons given to the reporter), never by hand.
//
// Machines are shared: run with --benchmark_repetitions=N; figures are the
// fastest repetition (the one other work disturbed least) with the median
// beside it, and ratios compare figures of the same run.
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

// The repetitions of one figure.
struct Spread {
  double min = 0;
  double median = 0;
  double max = 0;
  int count = 0;  // 0: never measured
};

// One judged figure. `min`/`median` are the figure's (for a throughput:
// pass the best as `min`); the ratio is min / baseline_min.
struct Verdict {
  enum class Goal {
    kNone,          // reported, not judged
    kAtMost,        // min <= target (a cost)
    kAtLeast,       // min >= target (a throughput)
    kRatioAtMost,   // min / baseline_min <= target
    kRatioAtLeast,  // min / baseline_min >= target
  };
  std::string name;
  std::string unit = "ns";
  double min = 0;
  double median = 0;     // 0: one run only
  std::string baseline;  // "" = none
  double baseline_min = 0;
  Goal goal = Goal::kNone;
  double target = 0;
};

// min / baseline_min, 0 without a baseline.
double verdict_ratio(const Verdict& v);
// True when the goal is met (or there is none).
bool verdict_ok(const Verdict& v);
// The one verdict line (no newline).
std::string format_verdict(const Verdict& v);
// Prints it on stdout, flushed.
void print_verdict(const Verdict& v);
// The same for a figure measured once (no median), built in place.
void print_verdict(std::string name, std::string unit, double figure,
                   Verdict::Goal goal = Verdict::Goal::kNone, double target = 0,
                   std::string baseline = "", double baseline_figure = 0);

class RatioReporter : public benchmark::ConsoleReporter {
 public:
  // Keeps the figures only; prints no comparison verdicts.
  RatioReporter() = default;
  explicit RatioReporter(std::vector<Comparison> comparisons, std::string empty_loop)
      : comparisons_(std::move(comparisons)), empty_loop_(std::move(empty_loop)) {}
  void ReportRuns(const std::vector<Run>& runs) override;
  void Finalize() override;

  // Wall-clock ns per iteration of a benchmark (full name), fastest
  // repetition; 0 when absent.
  double real_ns(const std::string& name) const;
  // CPU ns per iteration (what the comparison verdicts use: machines are
  // shared), fastest repetition; 0 when absent.
  double cpu_ns(const std::string& name) const;
  // A user counter of a benchmark (full name), last repetition; 0 when absent.
  double counter(const std::string& name, const std::string& counter) const;
  // The last value any benchmark reported for a counter, 0 when none: for
  // counters that one benchmark measures for several (interleaved) loops.
  double last_counter(const std::string& counter) const;
  // 1e9 / items_per_second of the fastest repetition of a benchmark
  // function (name without arguments), 0 when absent.
  double fastest_ns_per_item(const std::string& function_name) const;

  // Every repetition of a figure (full benchmark name).
  Spread real_spread(const std::string& name) const;
  Spread cpu_spread(const std::string& name) const;
  Spread counter_spread(const std::string& name, const std::string& counter) const;
  // ns per item (1e9 / items_per_second) over the repetitions of one benchmark.
  Spread ns_per_item_spread(const std::string& name) const;

 private:
  struct Figures {
    std::vector<double> real_ns;
    std::vector<double> cpu_ns;
    std::map<std::string, std::vector<double>> counters;
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
