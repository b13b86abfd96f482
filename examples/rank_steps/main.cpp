// rank_steps: a few training-like steps per rank, for running under a
// launcher (mpirun, torchrun, srun) and looking at what every rank wrote.
//
//   step                   one step (set_step: the step number)
//     forward / backward / optimizer   busy work, `--work-us` each
//   mark "step_barrier"    after every step, at the same point of the
//                          program on every rank: where the ranks would meet
//                          in a barrier, so tools can line ranks up on it
//
// `--slow-rank R` makes rank R's forward `--slow-factor` times longer: a
// straggler to find in the merged traces.
//
//   mpirun -np 4 env REGIONTRACE_SINKS=torch_profiler build/bin/rank_steps
#include <regiontrace/regiontrace.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

struct Settings {
  int steps = 4;
  long work_us = 2000;
  int slow_rank = -1;
  int slow_factor = 3;
};

int rank_from_launcher() {
  for (const char* name : {"RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID"}) {
    if (const char* v = std::getenv(name)) return std::atoi(v);
  }
  return 0;
}

// Spins rather than sleeps: the regions then hold CPU time, as real work
// would, and their length does not depend on the scheduler's timer slack.
void busy_for(long microseconds) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(microseconds);
  volatile unsigned long sink = 0;
  while (std::chrono::steady_clock::now() < until) sink = sink + 1;
}

bool parse(int argc, char** argv, Settings* s) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&](long* out) {
      if (i + 1 >= argc) return false;
      char* end = nullptr;
      *out = std::strtol(argv[++i], &end, 10);
      return *end == '\0' && *out >= 0;
    };
    long v = 0;
    if (arg == "--steps" && value(&v)) {
      s->steps = static_cast<int>(v);
    } else if (arg == "--work-us" && value(&v)) {
      s->work_us = v;
    } else if (arg == "--slow-rank" && value(&v)) {
      s->slow_rank = static_cast<int>(v);
    } else if (arg == "--slow-factor" && value(&v)) {
      s->slow_factor = static_cast<int>(v);
    } else {
      std::fprintf(stderr,
                   "rank_steps: bad argument `%s`\nusage: rank_steps [--steps N] [--work-us US] "
                   "[--slow-rank R] [--slow-factor F]   (non-negative integers)\n",
                   arg.c_str());
      return false;
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Settings s;
  if (!parse(argc, argv, &s)) return 2;
  const int rank = rank_from_launcher();
  const long forward_us = rank == s.slow_rank ? s.work_us * s.slow_factor : s.work_us;
  for (int i = 0; i < s.steps; ++i) {
    regiontrace::set_step(i);
    {
      RT_REGION("step");
      {
        RT_REGION("forward");
        busy_for(forward_us);
      }
      {
        RT_REGION("backward");
        busy_for(s.work_us);
      }
      {
        RT_REGION("optimizer");
        busy_for(s.work_us / 2);
      }
    }
    regiontrace::mark("step_barrier");
  }
  std::printf("rank %d: %d steps\n", rank, s.steps);
  return 0;
}
