// A rank of a pretend data-parallel job, for `regiontrace report`'s test:
// every step runs a `training_step` region of about `base_ms`, and the rank
// named by `slow_rank` sleeps `extra_ms` more in it. The rank comes from the
// launcher's environment (OMPI_COMM_WORLD_RANK, RANK, ...), as regiontrace
// reads it; the sinks come from REGIONTRACE_* variables.
//
// Usage: regiontrace_straggler_program <steps> <base_ms> <slow_rank> <extra_ms>
#include <regiontrace/regiontrace.hpp>

#include <chrono>
#include <cstdlib>
#include <thread>

namespace {

int rank_from_environment() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "RANK", "PMI_RANK"}) {
    if (const char* value = std::getenv(name)) return std::atoi(value);
  }
  return 0;
}

void sleep_ms(int ms) {
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) return 2;
  const int steps = std::atoi(argv[1]);
  const int base_ms = std::atoi(argv[2]);
  const int slow_rank = std::atoi(argv[3]);
  const int extra_ms = std::atoi(argv[4]);
  const int rank = rank_from_environment();
  for (int step = 0; step < steps; ++step) {
    regiontrace::set_step(step);
    {
      RT_REGION("training_step");
      {
        RT_REGION("forward");
        sleep_ms(base_ms);
      }
      if (rank == slow_rank) sleep_ms(extra_ms);
    }
    // Where a real job would leave its barrier.
    regiontrace::mark("step_barrier");
  }
  return 0;
}
