// Who this process is in a distributed run, read from the launcher's
// environment (torchrun, Open MPI, MPICH/PMI, Slurm). We never start
// processes.
#pragma once

#include "regiontrace/export.hpp"

#include <map>
#include <string>

namespace regiontrace::detail {

struct RankInfo {
  int rank = 0;
  int local_rank = 0;
  int world_size = 1;
  std::string source = "default";  // which variable gave the rank
  // Shared by every rank of one job (the launcher's job or run id), so
  // `${job_id}` in a path gives one folder per job; "local" without one.
  std::string job_id = "local";
  std::string job_id_source = "default";
};

using Environment = std::map<std::string, std::string>;

REGIONTRACE_INTERNAL Environment capture_environment();
REGIONTRACE_INTERNAL RankInfo rank_from_environment(const Environment& env);

}  // namespace regiontrace::detail
