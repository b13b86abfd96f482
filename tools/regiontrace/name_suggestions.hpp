// What `regiontrace diff` suggests when the two traces' module names mostly
// do not match: for A's unmatched names, B's closest, and the option
// (--strip-prefix, --map) that would align them when one is obvious.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "activation_diff.hpp"
#include "activation_records.hpp"

namespace regiontrace::cli {

// For each of A's unmatched module names (first seen first; the first `top`,
// 0: all), B's unmatched name closest to it. `match`: A's record -> B's, or
// kNoMatch; `b_matched`: whether each of B's records has a match.
std::vector<NameSuggestion> closest_names(const ActivationTrace& a, const ActivationTrace& b,
                                          const NamePool& names,
                                          const std::vector<std::uint32_t>& match,
                                          const std::vector<bool>& b_matched, std::size_t top);

}  // namespace regiontrace::cli
