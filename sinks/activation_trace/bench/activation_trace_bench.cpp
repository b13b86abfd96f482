// The JSONL path of activation_trace, measured in one run:
//   producer cost per record: building the record and queueing it, what the
//     observing thread pays besides the statistics (target <= 300 ns)
//   formatting cost per record on the writer thread
//   sustained records per second into a file, producer to disk (target >= 1M/s)
//   and, as its floor on this machine, write(2) alone of the same bytes into
//   the same folder: the kernel's copy into the page cache is the writer
//   thread's other cost besides formatting
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <map>
#include <string>

#include "activation_jsonl.hpp"
#include "activation_record.hpp"
#include "ratio_reporter.hpp"
#include "record_writer.hpp"

namespace regiontrace::activation {
namespace {

TensorStats typical_stats() {
  TensorStats s;
  s.numel = 1 * 4096 * 5120;
  s.shape = {1, 4096, 5120};
  s.dtype = "torch.bfloat16";
  s.device = "cpu";
  s.sum = -5.678123456789;
  s.mean = -2.7e-7;
  s.abs_mean = 1.2345678901234;
  s.min = -9.5;
  s.max = 9.012;
  s.absmax = 9.5;
  s.std = 1.5;
  s.rms = 1.5000001;
  s.l2 = 6858.2;
  s.hash = 0x1234567890abcdefull;
  return s;
}

const std::string kModules[] = {"transformer_blocks.0.attn1", "transformer_blocks.17.ffn",
                                "transformer_blocks.39.norm2", "proj_out"};

std::string temp_file(const char* name) {
  return (std::filesystem::temp_directory_path() /
          (std::string(name) + "_" + std::to_string(::getpid()) + ".jsonl"))
      .string();
}

double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

std::vector<std::string> stats_of(int64_t arg) {
  return arg == 0 ? std::vector<std::string>{"abs_mean", "sum"} : std::vector<std::string>{"all"};
}

// The producer's share: the record (names copied), the lock, the move into
// the queue. The statistics objects are made beforehand (compute_stats hands
// its result over by move), and the queue is large enough never to block, so
// the writer thread's speed does not leak in.
constexpr int kProducerRecords = 100000;

void BM_ProducerPerRecord(benchmark::State& state) {
  const std::string path = temp_file("rt_bench_producer");
  RecordWriter::Options o;
  o.path = path;
  o.capacity = 2 * kProducerRecords;
  RecordWriter writer(o, RecordFormatter(StatSet::parse(stats_of(state.range(0))), 0));
  // Steady state: the queue's two vectors have grown and their memory is
  // mapped, as after the first steps of a run.
  for (int round = 0; round < 2; ++round) {
    for (int k = 0; k < kProducerRecords; ++k) {
      writer.submit(ActivationRecord(kModules[k & 3], "out", "", 0, typical_stats()));
    }
    writer.flush();
  }
  std::vector<TensorStats> made(kProducerRecords, typical_stats());
  std::int64_t i = 0;
  for (auto _ : state) {
    writer.submit(ActivationRecord(kModules[i & 3], "out", "", i >> 6, std::move(made[i])));
    ++i;
  }
  writer.close();
  std::filesystem::remove(path);
  state.SetItemsProcessed(state.iterations());
}

void BM_FormatPerRecord(benchmark::State& state) {
  const RecordFormatter f(StatSet::parse(stats_of(state.range(0))), 0);
  ActivationRecord r(kModules[1], "out[0]", "", 12, typical_stats());
  r.seq = 123456;
  std::string out;
  for (auto _ : state) {
    f.append(out, r);
    if (out.size() > (1 << 20)) out.clear();
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations());
}

// One iteration: a million records from the producer until they are on disk.
void BM_SustainedToFile(benchmark::State& state) {
  constexpr int kRecords = 1000000;
  const std::string path = temp_file("rt_bench_sustained");
  const TensorStats proto = typical_stats();
  double cpu_seconds = 0;
  for (auto _ : state) {
    const double cpu0 = process_cpu_seconds();
    RecordWriter::Options o;
    o.path = path;
    RecordWriter writer(o, RecordFormatter(StatSet::parse(stats_of(state.range(0))), 0));
    for (int i = 0; i < kRecords; ++i) {
      TensorStats s = proto;
      writer.submit(ActivationRecord(kModules[i & 3], "out", "", i >> 6, std::move(s)));
    }
    writer.close();
    cpu_seconds += process_cpu_seconds() - cpu0;
  }
  std::filesystem::remove(path);
  state.SetItemsProcessed(state.iterations() * kRecords);
  // Producer and writer thread together: what a record costs the machine.
  state.counters["cpu_ns_per_record"] = cpu_seconds * 1e9 / (state.iterations() * kRecords);
}

// The file system's share of a sustained run: a million records' text,
// formatted beforehand, written with write(2) in blocks of 1000 records.
void BM_WriteOnly(benchmark::State& state) {
  constexpr int kBlockRecords = 1000;
  const std::string path = temp_file("rt_bench_write_only");
  const RecordFormatter f(StatSet::parse(stats_of(state.range(0))), 0);
  std::string block;
  for (int k = 0; k < kBlockRecords; ++k) {
    ActivationRecord r(kModules[k & 3], "out", "", k >> 6, typical_stats());
    r.seq = k;
    f.append(block, r);
  }
  for (auto _ : state) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return state.SkipWithError("cannot open the output file");
    for (int b = 0; b < 1000000 / kBlockRecords; ++b) {
      for (std::size_t done = 0; done < block.size();) {
        const ssize_t n = ::write(fd, block.data() + done, block.size() - done);
        if (n <= 0) {
          ::close(fd);
          return state.SkipWithError("write failed");
        }
        done += static_cast<std::size_t>(n);
      }
    }
    ::close(fd);
  }
  std::filesystem::remove(path);
  state.counters["bytes_per_record"] = static_cast<double>(block.size()) / kBlockRecords;
}

BENCHMARK(BM_ProducerPerRecord)
    ->Arg(0)
    ->Arg(1)
    ->ArgName("all_stats")
    ->UseRealTime()
    ->Iterations(kProducerRecords);
BENCHMARK(BM_FormatPerRecord)->Arg(0)->Arg(1)->ArgName("all_stats");
// A million records an iteration, for both stat sets: the sustained run
// and its floor are read side by side.
void million_record_runs(benchmark::internal::Benchmark* b) {
  b->Arg(0)->Arg(1)->ArgName("all_stats")->Unit(benchmark::kMillisecond)->UseRealTime();
  b->Iterations(3);
}
BENCHMARK(BM_SustainedToFile)->Apply(million_record_runs);
BENCHMARK(BM_WriteOnly)->Apply(million_record_runs);

}  // namespace
}  // namespace regiontrace::activation

int main(int argc, char** argv) {
  using regiontrace::bench::print_verdict;
  using regiontrace::bench::Verdict;
  benchmark::Initialize(&argc, argv);
  regiontrace::bench::RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  for (const char* arg : {"0", "1"}) {
    const std::string which = std::string(arg) == "0" ? "abs_mean,sum" : "all 17 stats";
    // CPU time of the one thread each loop runs on: on a shared machine
    // wall time counts other programs' turns too.
    const auto producer = reporter.cpu_spread(std::string("BM_ProducerPerRecord/all_stats:") + arg +
                                              "/iterations:100000/real_time");
    const auto format = reporter.cpu_spread(std::string("BM_FormatPerRecord/all_stats:") + arg);
    const std::string sustained_name =
        std::string("BM_SustainedToFile/all_stats:") + arg + "/iterations:3/real_time";
    const auto sustained = reporter.real_spread(sustained_name);
    const auto cpu = reporter.counter_spread(sustained_name, "cpu_ns_per_record");
    const std::string write_name =
        std::string("BM_WriteOnly/all_stats:") + arg + "/iterations:3/real_time";
    const auto write_only = reporter.real_spread(write_name);
    if (producer.count > 0) {
      Verdict v;
      v.name = "[" + which + "] producer per record";
      v.min = producer.min;
      v.median = producer.median;
      v.goal = Verdict::Goal::kAtMost;
      v.target = 300;
      print_verdict(v);
    }
    if (format.count > 0) {
      Verdict v;
      v.name = "[" + which + "] writer formatting per record";
      v.min = format.min;
      v.median = format.median;
      v.goal = Verdict::Goal::kAtMost;
      v.target = 300;
      print_verdict(v);
    }
    if (sustained.count > 0) {
      // One iteration writes a million records: M records/s = 1e9 / ns.
      Verdict v;
      v.name = "[" + which + "] sustained to a file (best, median)";
      v.unit = "M records/s";
      v.min = 1e9 / sustained.min;
      v.median = 1e9 / sustained.median;
      v.goal = Verdict::Goal::kAtLeast;
      v.target = 1.0;
      print_verdict(v);
    }
    if (write_only.count > 0) {
      // The writer thread's floor: its formatting, then the kernel's copy.
      Verdict w;
      w.name = "[" + which + "] floor: write(2) alone of the same bytes (" +
               std::to_string(static_cast<int>(reporter.counter(write_name, "bytes_per_record"))) +
               " B a record)";
      w.unit = "M records/s";
      w.min = 1e9 / write_only.min;
      w.median = 1e9 / write_only.median;
      print_verdict(w);
      if (format.count > 0) {
        print_verdict("[" + which + "] floor: writer thread, formatting then write(2)",
                      "M records/s", 1e3 / (format.min + write_only.min / 1e6));
      }
    }
    if (cpu.count > 0) {
      Verdict v;
      v.name = "[" + which + "] CPU per record, producer and writer";
      v.min = cpu.min;
      v.median = cpu.median;
      print_verdict(v);
    }
  }
  return 0;
}
