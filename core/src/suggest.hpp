// "did you mean ...?" for misspelled keys, sinks and regions.
#pragma once

#include "regiontrace/export.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace regiontrace::detail {

// The candidate closest to `word`, or "" when none is close enough to be a
// plausible typo.
REGIONTRACE_INTERNAL std::string closest_match(std::string_view word,
                                               const std::vector<std::string>& candidates);
// " (did you mean `x`?)" or "".
REGIONTRACE_INTERNAL std::string did_you_mean(std::string_view word,
                                              const std::vector<std::string>& candidates);
REGIONTRACE_INTERNAL std::string join(const std::vector<std::string>& items,
                                      std::string_view separator);

}  // namespace regiontrace::detail
