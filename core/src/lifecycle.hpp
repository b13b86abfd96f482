// Start-up and shut-down of the process-wide instance, and the exit paths
// that must leave whole files: normal exit, std::exit, SIGINT/SIGTERM, fork.
#pragma once

#include "regiontrace/regiontrace.hpp"

namespace regiontrace::detail {

// `explicit_init`: regiontrace::init(), as opposed to the lazy start at the
// first region; only an explicit call is told that sinks already run.
void start(const Options& options, bool explicit_init = true);
void stop();

}  // namespace regiontrace::detail
