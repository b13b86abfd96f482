// The soak benchmark: many threads running regions, ops and
// observed tensors for minutes with every file-writing sink on, configured by
// a profile as an application is (scripts/soak.sh passes bench/soak/soak.yaml).
// It samples its resident set once a second and, at the end, reads the
// activation JSONL back: every observation must be a record or counted as
// dropped. Prints verdict lines; exits 1 when the RSS bound or the count
// fails.
//
//   regiontrace_soak --threads 64 --seconds 600 --rss-bound-mb 3072 --csv rss.csv
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regiontrace/regiontrace.hpp>
#include <regiontrace/torch.hpp>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace fs = std::filesystem;

double rss_mb() {
  std::ifstream statm("/proc/self/statm");
  long pages_total = 0, pages_resident = 0;
  statm >> pages_total >> pages_resident;
  return static_cast<double>(pages_resident) * static_cast<double>(sysconf(_SC_PAGESIZE)) / 1e6;
}

struct ActivationCount {
  long records = 0;
  long dropped = 0;
  std::string file;
};

// Records and the closing summary's dropped count of this process's JSONL.
ActivationCount count_activations(const std::string& folder) {
  ActivationCount c;
  const std::string suffix = "_pid" + std::to_string(getpid()) + ".jsonl";
  for (const auto& entry : fs::directory_iterator(folder)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("activations_", 0) != 0 || name.size() < suffix.size() ||
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) {
      continue;
    }
    c.file = entry.path().string();
    std::ifstream in(entry.path());
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty()) continue;
      const auto j = nlohmann::json::parse(line);
      if (j.contains("tensor")) ++c.records;
      if (j.contains("summary")) c.dropped = j["summary"].value("dropped", 0L);
    }
  }
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"regiontrace soak: threads x regions x sinks for minutes, RSS and record counts"};
  int threads = 64;
  double seconds = 600;
  double bound_mb = 3072;
  std::string csv;
  app.add_option("--threads", threads, "application threads")->check(CLI::Range(1, 1024));
  app.add_option("--seconds", seconds, "how long the threads run")->check(CLI::PositiveNumber);
  app.add_option("--rss-bound-mb", bound_mb, "the resident set must stay below this");
  app.add_option("--csv", csv, "write (seconds, rss_mb) samples here");
  CLI11_PARSE(app, argc, argv);

  at::set_num_threads(1);
  regiontrace::init();
  std::atomic<bool> stop{false};
  std::atomic<long> observed{0};
  std::atomic<long> pairs{0};

  std::vector<std::pair<double, double>> samples;
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  std::thread sampler([&] {
    while (!stop.load()) {
      samples.emplace_back(elapsed(), rss_mb());
      std::this_thread::sleep_for(std::chrono::seconds(1));
    }
  });

  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      const at::Tensor a = at::randn({16, 16});
      long mine = 0;
      for (long i = 0; !stop.load(std::memory_order_relaxed); ++i) {
        RT_REGION("soak_step");
        for (int b = 0; b < 4; ++b) {
          RT_REGION("soak_block");
          const at::Tensor out = at::mm(a, a) * static_cast<double>(b + t);
          regiontrace::observe("out", out);
          ++mine;
        }
        if (t == 0 && i % 64 == 0) regiontrace::set_step(i / 64);
        pairs.fetch_add(5, std::memory_order_relaxed);
      }
      observed.fetch_add(mine);
    });
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop.store(true);
  for (auto& w : workers) w.join();
  sampler.join();
  const double before_shutdown = rss_mb();
  regiontrace::shutdown();

  double peak = 0;
  for (const auto& s : samples) peak = std::max(peak, s.second);
  peak = std::max(peak, before_shutdown);
  if (!csv.empty()) {
    std::ofstream out(csv);
    out << "seconds,rss_mb\n";
    for (const auto& s : samples) out << s.first << "," << s.second << "\n";
  }
  std::printf("soak: %d threads, %.0f s, %ld region pairs (%.2fM/s), %ld tensors observed\n",
              threads, seconds, pairs.load(), pairs.load() / seconds / 1e6, observed.load());
  std::printf("rss: ");
  for (int q = 1; q <= 10; ++q) {
    const std::size_t i = std::min(samples.size() - 1, samples.size() * q / 10);
    if (!samples.empty()) std::printf("%.0f%%=%.0f MB ", q * 10.0, samples[i].second);
  }
  std::printf("\nrss peak %.0f MB, bound %.0f MB: %s\n", peak, bound_mb,
              peak < bound_mb ? "ok" : "MISS");
  const char* dir = std::getenv("RT_SOAK_OUTPUT_DIR");
  bool counts_ok = true;
  if (dir != nullptr) {
    const ActivationCount c = count_activations(dir);
    counts_ok = c.records + c.dropped == observed.load();
    std::printf("activation records %ld + dropped %ld = %ld, observed %ld: %s (%s)\n", c.records,
                c.dropped, c.records + c.dropped, observed.load(), counts_ok ? "ok" : "MISS",
                c.file.c_str());
  }
  return peak < bound_mb && counts_ok ? 0 : 1;
}
