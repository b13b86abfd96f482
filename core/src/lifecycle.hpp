// Start-up and shut-down of the process-wide instance, and the exit paths
// that must leave whole files: normal exit, std::exit, SIGINT/SIGTERM, fork.
#pragma once

#include "regiontrace/regiontrace.hpp"

namespace regiontrace::detail {

// Throws regiontrace::Error. `explicit_init`: regiontrace::init(), as
// opposed to the implicit start; only an explicit call is told that sinks
// already run.
void start(const Options& options, bool explicit_init = true);
// The start made by the first region, step, mark or snapshot: never throws
// into the application. A configuration error is printed once, then the
// `on_error` policy applies (exit with status 2, or continue with sinks off).
void start_implicitly();
void stop();

}  // namespace regiontrace::detail
