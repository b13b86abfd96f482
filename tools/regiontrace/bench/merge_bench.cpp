// How fast `regiontrace merge` streams, and in how much memory: N gzip traces
// of M MB (uncompressed) each (default 32 x 50, the figures; set
// REGIONTRACE_MERGE_BENCH_TRACES / _MB for a quicker run) are generated in a
// temporary folder, merged by the real program, and read by `zcat` as the
// baseline. Printed: uncompressed MB/s of each, merge / zcat as a ratio of
// wall time and of CPU time (user + sys of the child: this machine is
// shared), and the merge's peak RSS (getrusage of the child). The folder is
// removed at the end.
//
// The traces are the conventions' shape (header with baseTimeNanoseconds and
// regiontrace.clockSync, then region spans with ops nested in them). Each
// file is three gzip members (header, body, end) — valid gzip that zcat and
// zlib read as one stream — so the 50 MB body is compressed once, not 32 times.
#include <benchmark/benchmark.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <zlib.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "ratio_reporter.hpp"

namespace {

namespace fs = std::filesystem;

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && std::atoi(v) > 0 ? std::atoi(v) : fallback;
}

std::string gzip_member(const std::string& text) {
  z_stream zs{};
  if (deflateInit2(&zs, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    throw std::runtime_error("deflateInit2 failed");
  }
  std::string out(deflateBound(&zs, text.size()), '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  zs.avail_in = static_cast<uInt>(text.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  if (deflate(&zs, Z_FINISH) != Z_STREAM_END) throw std::runtime_error("deflate failed");
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

// ~170-byte ops, 100 per region span, ts increasing: 50 MB is ~300k events.
std::string trace_body(std::size_t bytes) {
  std::string body;
  body.reserve(bytes + 4096);
  long long ts_ns = 1000;
  long op = 0;
  char buf[512];
  bool first = true;
  while (body.size() < bytes) {
    const long long region_start = ts_ns;
    std::snprintf(buf, sizeof(buf),
                  "%s{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"region::blocks.%ld\","
                  "\"pid\":4242,\"tid\":11,\"ts\":%lld.%03lld,\"dur\":%d,\"args\":{\"region\":"
                  "\"blocks.%ld\",\"path\":\"denoise/blocks.%ld\",\"depth\":1,\"step\":%ld}}",
                  first ? "" : ",\n", op % 24, region_start / 1000, region_start % 1000, 100 * 20,
                  op % 24, op % 24, op / 2400);
    first = false;
    body += buf;
    for (int i = 0; i < 100; ++i, ++op) {
      ts_ns += 20000;
      std::snprintf(buf, sizeof(buf),
                    ",\n{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::%s\",\"pid\":4242,"
                    "\"tid\":11,\"ts\":%lld.%03lld,\"dur\":12.5,\"args\":{\"External id\":%ld,"
                    "\"Input Dims\":[[64,64],[64,64]],\"Input type\":[\"float\",\"float\"]}}",
                    i % 3 == 0 ? "mm" : (i % 3 == 1 ? "add" : "gelu"), (ts_ns - 10000) / 1000,
                    (ts_ns - 10000) % 1000, op);
      body += buf;
    }
    ts_ns = region_start + 2000000 + 1000;
  }
  return body;
}

std::string trace_header(int rank) {
  const long long mono = 5000000000LL + rank * 1000LL;
  const long long real = 1750000000000000000LL + rank * 3000LL;
  char buf[1024];
  std::snprintf(buf, sizeof(buf),
                "{\"schemaVersion\":1,\"displayTimeUnit\":\"ms\",\"baseTimeNanoseconds\":%lld,"
                "\"regiontrace\":{\"sink\":\"torch_profiler\",\"rank\":%d,\"local_rank\":%d,"
                "\"world_size\":32,\"pid\":4242,\"clockSync\":{\"start\":{\"realtime_ns\":%lld,"
                "\"monotonic_ns\":%lld},\"end\":{\"realtime_ns\":%lld,\"monotonic_ns\":%lld}}},"
                "\"traceEvents\":[\n",
                mono, rank, rank % 8, real, mono, real + 60000000000LL, mono + 60000000000LL);
  return std::string(buf) +
         "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":4242,\"tid\":0,\"args\":{\"name\":"
         "\"rank " +
         std::to_string(rank) + " (pid 4242)\"}},\n";
}

struct Inputs {
  fs::path dir;
  std::vector<std::string> files;
  double uncompressed_bytes = 0;
  ~Inputs() {
    std::error_code ec;
    if (!dir.empty()) fs::remove_all(dir, ec);
  }
};

Inputs& inputs() {
  static Inputs in = [] {
    Inputs made;
    const int traces = env_int("REGIONTRACE_MERGE_BENCH_TRACES", 32);
    const int mb = env_int("REGIONTRACE_MERGE_BENCH_MB", 50);
    std::string tmpl = (fs::temp_directory_path() / "regiontrace_merge_bench_XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    made.dir = tmpl;
    const std::string body = trace_body(static_cast<std::size_t>(mb) << 20);
    const std::string body_gz = gzip_member(body);
    const std::string end_gz = gzip_member("\n]}\n");
    for (int rank = 0; rank < traces; ++rank) {
      const std::string header = trace_header(rank);
      const std::string path =
          (made.dir / ("torch_trace_rank" + std::to_string(rank) + "_pid4242.json.gz")).string();
      std::ofstream out(path, std::ios::binary);
      out << gzip_member(header) << body_gz << end_gz;
      if (!out) throw std::runtime_error("cannot write " + path);
      made.files.push_back(path);
      made.uncompressed_bytes += static_cast<double>(header.size() + body.size() + 4);
    }
    std::printf("inputs: %d gzip traces of %.1f MB uncompressed (%.1f MB gzip) in %s\n", traces,
                static_cast<double>(body.size()) / 1e6, static_cast<double>(body_gz.size()) / 1e6,
                made.dir.c_str());
    return made;
  }();
  return in;
}

struct ChildFigures {
  double cpu_s = 0;
  double peak_rss_mib = 0;
};

// Runs a shell command; what its children used, from getrusage.
ChildFigures run_child(const std::string& command) {
  // Each child is measured alone: it runs in a fresh intermediate process
  // whose RUSAGE_CHILDREN covers exactly it.
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error("pipe failed");
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    const int rc = std::system(command.c_str());
    rusage usage{};
    getrusage(RUSAGE_CHILDREN, &usage);
    double figures[3] = {static_cast<double>(usage.ru_utime.tv_sec) + usage.ru_utime.tv_usec / 1e6,
                         static_cast<double>(usage.ru_stime.tv_sec) + usage.ru_stime.tv_usec / 1e6,
                         static_cast<double>(usage.ru_maxrss) / 1024.0};
    if (write(fds[1], figures, sizeof(figures)) != sizeof(figures)) _exit(3);
    _exit(rc == 0 ? 0 : 1);
  }
  close(fds[1]);
  double figures[3] = {0, 0, 0};
  const bool got = read(fds[0], figures, sizeof(figures)) == sizeof(figures);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!got || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw std::runtime_error("failed: " + command);
  }
  return {figures[0] + figures[1], figures[2]};
}

std::string file_list() {
  std::string list;
  for (const auto& f : inputs().files) list += " '" + f + "'";
  return list;
}

void report(benchmark::State& state, const ChildFigures& f, double seconds) {
  const double mb = inputs().uncompressed_bytes / 1e6;
  state.counters["MB_per_s"] = mb / seconds;
  state.counters["cpu_s"] = f.cpu_s;
  state.counters["peak_rss_MiB"] = f.peak_rss_mib;
  state.SetIterationTime(seconds);
}

template <typename Run>
void timed(benchmark::State& state, Run run) {
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    const ChildFigures f = run();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    report(state, f, seconds);
  }
}

void BM_Zcat(benchmark::State& state) {
  const std::string cmd = "zcat" + file_list() + " > /dev/null";
  timed(state, [&] { return run_child(cmd); });
}

void BM_Merge(benchmark::State& state) {
  const std::string out = (inputs().dir / "merged.json").string();
  const std::string cmd = std::string("'") + REGIONTRACE_CLI + "' merge -o '" + out + "'" +
                          file_list() + " > /dev/null";
  timed(state, [&] {
    const ChildFigures f = run_child(cmd);
    std::error_code ec;
    fs::remove(out, ec);
    return f;
  });
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  inputs();  // generated before any timing
  benchmark::RegisterBenchmark("BM_Zcat", BM_Zcat)
      ->Iterations(1)
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_Merge", BM_Merge)
      ->Iterations(1)
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond);
  regiontrace::bench::RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  const std::string zcat = "BM_Zcat/iterations:1/manual_time";
  const std::string merge = "BM_Merge/iterations:1/manual_time";
  const double zcat_ns = reporter.real_ns(zcat);
  const double merge_ns = reporter.real_ns(merge);
  if (zcat_ns > 0 && merge_ns > 0) {
    const double mbps = reporter.counter(merge, "MB_per_s");
    const double rss = reporter.counter(merge, "peak_rss_MiB");
    std::printf("\nmerge of %zu traces, %.0f MB uncompressed:\n", inputs().files.size(),
                inputs().uncompressed_bytes / 1e6);
    const double mb = inputs().uncompressed_bytes / 1e6;
    const double merge_cpu = reporter.counter(merge, "cpu_s");
    const double zcat_cpu = reporter.counter(zcat, "cpu_s");
    using regiontrace::bench::print_verdict;
    using Goal = regiontrace::bench::Verdict::Goal;
    print_verdict("merge throughput, wall time (zcat of the same inputs as baseline)", "MB/s", mbps,
                  Goal::kAtLeast, 100, "zcat", reporter.counter(zcat, "MB_per_s"));
    // On a machine shared with other work, wall time mostly measures the
    // others; CPU seconds measure the program.
    print_verdict("merge throughput per CPU second (zcat as baseline)", "MB/CPU-s", mb / merge_cpu,
                  Goal::kAtLeast, 100, "zcat", mb / zcat_cpu);
    print_verdict("merge peak RSS", "MiB", rss, Goal::kAtMost, 256);
  }
  return 0;
}
