#include "rank_info.hpp"

#include <charconv>

extern char** environ;

namespace regiontrace::detail {
namespace {

bool read_int(const Environment& env, const char* name, int* out) {
  if (name == nullptr) return false;
  auto it = env.find(name);
  if (it == env.end() || it->second.empty()) return false;
  int v = 0;
  const std::string& s = it->second;
  auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size() || v < 0) return false;
  *out = v;
  return true;
}

// One launcher's variables. Rank, local rank and size are taken from the
// launcher that gave the rank: torchrun under Slurm sets both RANK and
// SLURM_PROCID, and only torchrun's numbers describe the workers.
struct Launcher {
  const char* rank;
  const char* local_rank;
  const char* world_size;
};

// Most specific first: a launcher started inside another one's allocation
// (mpirun or torchrun in an sbatch job) is the one that made this process.
const Launcher kLaunchers[] = {
    {"RANK", "LOCAL_RANK", "WORLD_SIZE"},                                            // torchrun
    {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_SIZE"},  // Open MPI
    {"PMIX_RANK", nullptr, nullptr},                                                 // PMIx
    {"PMI_RANK", "MPI_LOCALRANKID", "PMI_SIZE"},        // MPICH, Intel MPI
    {"SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS"},  // srun
};

// torchrun's run id is "none" unless --rdzv_id or --standalone set it.
const char* const kJobIds[] = {"SLURM_JOB_ID",   "OMPI_MCA_ess_base_jobid",
                               "PMIX_NAMESPACE", "TORCHELASTIC_RUN_ID",
                               "PBS_JOBID",      "LSB_JOBID"};

}  // namespace

Environment capture_environment() {
  Environment env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string kv(*e);
    const auto eq = kv.find('=');
    if (eq != std::string::npos) env.emplace(kv.substr(0, eq), kv.substr(eq + 1));
  }
  return env;
}

RankInfo rank_from_environment(const Environment& env) {
  RankInfo info;
  const Launcher* from = nullptr;
  for (const Launcher& l : kLaunchers) {
    if (read_int(env, l.rank, &info.rank)) {
      info.source = l.rank;
      from = &l;
      break;
    }
  }
  bool local = from != nullptr && read_int(env, from->local_rank, &info.local_rank);
  for (const Launcher& l : kLaunchers) {
    if (local) break;
    local = read_int(env, l.local_rank, &info.local_rank);
  }
  if (!local) info.local_rank = info.rank;
  bool world = from != nullptr && read_int(env, from->world_size, &info.world_size);
  for (const Launcher& l : kLaunchers) {
    if (world) break;
    world = read_int(env, l.world_size, &info.world_size);
  }
  if (info.world_size <= info.rank) info.world_size = info.rank + 1;
  for (const char* name : kJobIds) {
    auto it = env.find(name);
    if (it == env.end() || it->second.empty() || it->second == "none") continue;
    info.job_id = it->second;
    info.job_id_source = name;
    break;
  }
  return info;
}

}  // namespace regiontrace::detail
