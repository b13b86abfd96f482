// The JSON text of a CPU snapshot file: the live allocations grouped by the
// region path that made them (largest first), with totals per device and per
// step, and the largest allocations of each region. Schema: docs/memory.md.
#pragma once

#include <cstdint>
#include <string>

#include "memory_records.hpp"
#include "region_paths.hpp"

namespace regiontrace::memory {

struct SnapshotContext {
  int rank = 0;
  long pid = 0;
  std::int64_t max_allocations = 32;  // listed per region
  std::string cuda_pickle_file;       // beside it, "" when none was written
};

std::string format_snapshot(const SnapshotJob& job, const RegionPaths& paths,
                            const SnapshotContext& context);

}  // namespace regiontrace::memory
