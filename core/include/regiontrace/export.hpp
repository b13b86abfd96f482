#pragma once

// REGIONTRACE_API: what libregiontrace.so exports, the public headers' names
// only. REGIONTRACE_INTERNAL: core classes and functions behind those; hidden,
// so no program or plugin can come to depend on them (tools use
// <regiontrace/inspect.hpp>; core's own tests link the core objects
// statically). A test lists the exported symbols.
#if defined(_WIN32)
#define REGIONTRACE_API __declspec(dllexport)
#define REGIONTRACE_INTERNAL
#else
#define REGIONTRACE_API __attribute__((visibility("default")))
#define REGIONTRACE_INTERNAL __attribute__((visibility("hidden")))
#endif
