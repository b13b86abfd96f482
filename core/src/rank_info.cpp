#include "rank_info.hpp"

#include <charconv>

extern char** environ;

namespace regiontrace::detail {
namespace {

bool read_int(const Environment& env, const char* name, int* out) {
  auto it = env.find(name);
  if (it == env.end() || it->second.empty()) return false;
  int v = 0;
  const std::string& s = it->second;
  auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size() || v < 0) return false;
  *out = v;
  return true;
}

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
  static const char* const kRank[] = {"RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID"};
  static const char* const kLocal[] = {"LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID"};
  static const char* const kWorld[] = {"WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE",
                                       "SLURM_NTASKS"};
  for (const char* name : kRank) {
    if (read_int(env, name, &info.rank)) {
      info.source = name;
      break;
    }
  }
  bool local = false;
  for (const char* name : kLocal) {
    if ((local = read_int(env, name, &info.local_rank))) break;
  }
  if (!local) info.local_rank = info.rank;
  for (const char* name : kWorld) {
    if (read_int(env, name, &info.world_size)) break;
  }
  if (info.world_size <= info.rank) info.world_size = info.rank + 1;
  return info;
}

}  // namespace regiontrace::detail
