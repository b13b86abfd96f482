// Highest memory peak per region path and device in one rank's memory
// summary (memory_summary_rank<r>_pid<p>.json, the memory_snapshot sink's),
// for `regiontrace report`.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>

namespace regiontrace::cli {

struct RankMemoryPeaks {
  std::string source;
  std::int64_t rank = 0;
  // (region path, device) -> highest peak in bytes
  std::map<std::pair<std::string, std::string>, std::int64_t> peak_bytes;
};

// Whether a file name looks like a memory summary.
bool is_memory_summary_name(const std::string& path);
// Throws std::runtime_error naming the file and key when it is not one.
RankMemoryPeaks read_memory_peaks(const std::string& path);

}  // namespace regiontrace::cli
