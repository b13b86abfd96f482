// Which ops took longer on a slow rank, inside the region it is slow in: from
// the ranks' torch traces (events of category cpu_op), each op's total time
// inside the region's spans on the slow rank against the fastest rank and the
// median of the other ranks. A sleep or a wait shows no op; a kernel that got
// slower shows in the op that launched or waited for it.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "rank_region_times.hpp"
#include "rank_report.hpp"

namespace regiontrace::cli {

// Per region, per op name: total ms of the ops that began inside one of the
// region's spans on the same thread (nested deeper too; a region that
// recurses counts an op once). Reads trace.source again, streamed.
std::map<std::string, std::map<std::string, double>> op_ms_inside(
    const RankRegionTimes& trace, const std::set<std::string>& regions);

// For every straggler of `report` whose rank has a torch trace among
// `traces` (the ones build_report was given), as do other ranks: fills in
// its slower_ops, at most `top`. A rank's torch trace is its trace with the
// most cpu_op events, which need not be the one whose region times count.
void add_slower_ops(Report& report, const std::vector<RankRegionTimes>& traces,
                    std::size_t top = 5);

// The ops with the most added time, largest first, at most `top`; only ops
// that took longer. `others`: each other rank's op totals.
std::vector<OpDelta> slower_ops(const std::map<std::string, double>& slow,
                                const std::map<std::string, double>& fastest,
                                const std::vector<const std::map<std::string, double>*>& others,
                                std::size_t top);

}  // namespace regiontrace::cli
