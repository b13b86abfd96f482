// What a program waits for at its end when its ops were profiled: N small
// ops (`at::add` on 8 elements) in one selected region, then the program
// ends. regiontrace: the time regiontrace::shutdown() blocks (the trace
// written and closed). Kineto, the baseline: disableProfiler() and
// ProfilerResult::save(), what `torch.profiler.profile()` followed by
// `export_chrome_trace()` runs. Peak RSS growth over the process's resident
// size before the first op, from VmHWM.
//
// Each measurement runs in a forked child (one profiler per process, and a
// fresh VmHWM), the two configurations alternated, `TP_EXPORT_ROUNDS`
// rounds (default 3); the figures are the fastest round, the median beside
// it. `TP_EXPORT_OPS` overrides the op counts (default "100000,1000000").
//
//   build/bin/regiontrace_torch_export_bench
#include <ATen/ATen.h>
#include <ftw.h>
#include <sys/wait.h>
#include <torch/csrc/autograd/profiler_kineto.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "ratio_reporter.hpp"
#include "regiontrace/regiontrace.hpp"

namespace {

namespace prof = torch::autograd::profiler;
namespace bench = regiontrace::bench;

struct Figures {
  double blocked_s = 0;   // from the last op to everything written
  double rss_growth = 0;  // bytes
  double file_bytes = 0;
  double stop_s = 0;  // Kineto: disableProfiler() alone, which any exporter of its events waits for
};

// Not std::filesystem::remove_all: some PyPI libtorch builds export their
// own copy of it (tests/support/remove_tree.hpp says why that breaks).
void remove_folder(const std::filesystem::path& dir) {
  ::nftw(
      dir.c_str(),
      [](const char* path, const struct stat*, int, struct FTW*) { return ::remove(path); }, 16,
      FTW_DEPTH | FTW_PHYS);
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// VmHWM or VmRSS, in bytes.
double status_bytes(const char* key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) == 0) return std::atof(line.c_str() + std::strlen(key) + 1) * 1024.0;
  }
  return 0;
}

double folder_bytes(const std::filesystem::path& dir) {
  double total = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    if (e.is_regular_file() && e.path().string().find(".pt.trace.json") != std::string::npos) {
      total += static_cast<double>(e.file_size());
    }
  }
  return total;
}

void run_ops(long n) {
  const at::Tensor a = at::ones({8});
  for (long i = 0; i < n; ++i) (void)at::add(a, a);
}

Figures kineto(long n, const std::filesystem::path& dir) {
  const prof::ProfilerConfig config(prof::ProfilerState::KINETO);
  const std::set<prof::ActivityType> cpu{prof::ActivityType::CPU};
  (void)at::add(at::ones({8}), 1);  // the ATen start-up, outside both figures
  const double rss0 = status_bytes("VmRSS:");
  prof::prepareProfiler(config, cpu);
  prof::enableProfiler(config, cpu);
  run_ops(n);
  const auto t0 = std::chrono::steady_clock::now();
  std::unique_ptr<prof::ProfilerResult> result = prof::disableProfiler();
  const double stop_s = seconds_since(t0);
  result->save((dir / "kineto.pt.trace.json").string());
  Figures f;
  f.blocked_s = seconds_since(t0);
  f.stop_s = stop_s;
  f.rss_growth = status_bytes("VmHWM:") - rss0;
  f.file_bytes = folder_bytes(dir);
  return f;
}

Figures ours(long n, const std::filesystem::path& dir) {
  (void)at::add(at::ones({8}), 1);
  const double rss0 = status_bytes("VmRSS:");
  regiontrace::Options o;
  o.read_environment = false;
  o.set("output_dir", dir.string());
  o.set("log_level", "warn");
  o.set("handle_signals", "false");
  o.set("sinks.torch_profiler.regions", "export_region");
  o.set("sinks.torch_profiler.max_events", "0");
  regiontrace::init(o);
  {
    RT_REGION("export_region");
    run_ops(n);
  }
  const auto t0 = std::chrono::steady_clock::now();
  regiontrace::shutdown();
  Figures f;
  f.blocked_s = seconds_since(t0);
  f.rss_growth = status_bytes("VmHWM:") - rss0;
  f.file_bytes = folder_bytes(dir);
  return f;
}

// Runs one measurement in a child; its figures come back through a pipe.
template <typename Fn>
Figures in_child(Fn fn, long n) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("regiontrace_export_bench_" + std::to_string(getpid()));
  remove_folder(dir);
  std::filesystem::create_directories(dir);
  int fds[2];
  if (pipe(fds) != 0) std::exit(1);
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    const Figures f = fn(n, dir);
    char line[256];
    const int len = std::snprintf(line, sizeof(line), "%.6f %.0f %.0f %.6f\n", f.blocked_s,
                                  f.rss_growth, f.file_bytes, f.stop_s);
    (void)!write(fds[1], line, static_cast<std::size_t>(len));
    _exit(0);
  }
  close(fds[1]);
  char buf[256] = {};
  const ssize_t got = read(fds[0], buf, sizeof(buf) - 1);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  remove_folder(dir);
  Figures f;
  if (got <= 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
      std::sscanf(buf, "%lf %lf %lf %lf", &f.blocked_s, &f.rss_growth, &f.file_bytes, &f.stop_s) !=
          4) {
    std::fprintf(stderr, "regiontrace_torch_export_bench: a measurement failed (status %d)\n",
                 status);
    std::exit(1);
  }
  return f;
}

std::vector<long> op_counts() {
  const char* s = std::getenv("TP_EXPORT_OPS");
  std::vector<long> counts;
  std::stringstream in(s != nullptr ? s : "100000,1000000");
  for (std::string item; std::getline(in, item, ',');) counts.push_back(std::atol(item.c_str()));
  return counts;
}

bench::Verdict verdict(const std::string& name, const std::string& unit,
                       std::vector<double> values) {
  std::sort(values.begin(), values.end());
  bench::Verdict v;
  v.name = name;
  v.unit = unit;
  v.min = values.front();
  v.median = values[values.size() / 2];
  return v;
}

std::string ops_words(long n) {
  return n % 1000000 == 0 ? std::to_string(n / 1000000) + "M" : std::to_string(n / 1000) + "k";
}

}  // namespace

int main() {
  const char* r = std::getenv("TP_EXPORT_ROUNDS");
  const int rounds = r != nullptr && std::atoi(r) > 0 ? std::atoi(r) : 3;
  for (const long n : op_counts()) {
    std::vector<double> ours_s, kineto_s, kineto_stop_s, ours_rss, kineto_rss;
    double ours_file = 0, kineto_file = 0;
    for (int round = 0; round < rounds; ++round) {
      // Alternated, the first of each round switching, so neither side
      // always runs on a machine warmed by the other.
      for (int side = 0; side < 2; ++side) {
        if ((side + round) % 2 == 0) {
          const Figures f = in_child(ours, n);
          ours_s.push_back(f.blocked_s);
          ours_rss.push_back(f.rss_growth);
          ours_file = f.file_bytes;
        } else {
          const Figures f = in_child(kineto, n);
          kineto_s.push_back(f.blocked_s);
          kineto_stop_s.push_back(f.stop_s);
          kineto_rss.push_back(f.rss_growth);
          kineto_file = f.file_bytes;
        }
      }
    }
    const std::string ops = ops_words(n) + " ops in one region";
    bench::Verdict kin = verdict(ops + ": Kineto, disableProfiler + save", "s", kineto_s);
    bench::print_verdict(kin);
    // The floor of any exporter that reads libtorch's events: the stop
    // itself (Kineto's own conversion of every op happens in it).
    bench::Verdict stop =
        verdict(ops + ": floor: Kineto's disableProfiler alone", "s", kineto_stop_s);
    stop.baseline = "Kineto";
    stop.baseline_min = kin.min;
    bench::print_verdict(stop);
    bench::Verdict mine = verdict(ops + ": blocked at exit (shutdown)", "s", ours_s);
    mine.baseline = "Kineto";
    mine.baseline_min = kin.min;
    mine.goal = bench::Verdict::Goal::kRatioAtMost;
    mine.target = 0.5;
    bench::print_verdict(mine);
    if (n <= 100000) {
      bench::Verdict abs = mine;
      abs.baseline.clear();
      abs.goal = bench::Verdict::Goal::kAtMost;
      abs.target = 1.0;
      bench::print_verdict(abs);
    }
    std::vector<double> kr, orr;
    for (double b : kineto_rss) kr.push_back(b / (1 << 20));
    for (double b : ours_rss) orr.push_back(b / (1 << 20));
    bench::Verdict krss = verdict(ops + ": Kineto, peak RSS growth", "MiB", kr);
    bench::print_verdict(krss);
    bench::Verdict orss = verdict(ops + ": peak RSS growth", "MiB", orr);
    orss.baseline = "Kineto";
    orss.baseline_min = krss.min;
    orss.goal = bench::Verdict::Goal::kRatioAtMost;
    orss.target = 1.0;
    bench::print_verdict(orss);
    bench::print_verdict(ops + ": trace size, gzip (Kineto's JSON beside it)", "MiB",
                         ours_file / (1 << 20), bench::Verdict::Goal::kNone, 0, "Kineto",
                         kineto_file / (1 << 20));
  }
  return 0;
}
