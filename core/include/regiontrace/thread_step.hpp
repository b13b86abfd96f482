// A step per thread for what a thread observes.
//
//   regiontrace::set_thread_step(i);   // this thread's tensor events carry step i
//   ...
//   regiontrace::set_thread_step(INT64_MIN);  // set_step()'s again (kNoStep)
//
// The tensor events a thread sends (regiontrace::observe, module outputs:
// the activation statistics) carry its thread step instead of set_step()'s,
// and each sink's `steps` selects them by it. For programs whose threads run
// different steps at once, as FastVideo's trace_step, which is per thread.
// Regions, spans, marks and the profiler's step spans keep following
// set_step(): they are one timeline for the process.
#pragma once

#include <cstdint>

#include "regiontrace/export.hpp"

namespace regiontrace {

// INT64_MIN (kNoStep) clears it: the thread's tensor events follow
// set_step() again.
REGIONTRACE_API void set_thread_step(std::int64_t step);
// The calling thread's step, or INT64_MIN when it follows set_step().
REGIONTRACE_API std::int64_t thread_step();

}  // namespace regiontrace
