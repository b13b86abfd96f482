#pragma once

#if defined(_WIN32)
#define REGIONTRACE_API __declspec(dllexport)
#else
#define REGIONTRACE_API __attribute__((visibility("default")))
#endif

// Internals the regiontrace CLI and tests link against; not a stable API.
#define REGIONTRACE_INTERNAL REGIONTRACE_API
