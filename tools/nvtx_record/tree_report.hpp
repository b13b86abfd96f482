// A RangeForest as text for people (an indented tree with count, total,
// average, min and max per range) or as JSON for programs.
#pragma once

#include <cstdint>
#include <string>

#include "range_tree.hpp"

namespace regiontrace::nvtx_record {

std::string text_report(const RangeForest& forest);
std::string json_report(const RangeForest& forest);

}  // namespace regiontrace::nvtx_record
