// Start-up and shut-down of the process-wide instance, and the exit paths
// that must leave whole files: normal exit, std::exit, SIGINT/SIGTERM, fork.
#pragma once

#include "regiontrace/regiontrace.hpp"

namespace regiontrace::detail {

void start(const Options& options);
void stop();

}  // namespace regiontrace::detail
