// Symbol visibility of libregiontrace_tensor_stats.
#pragma once

#if defined(_WIN32)
#define REGIONTRACE_TENSOR_STATS_API __declspec(dllexport)
#else
#define REGIONTRACE_TENSOR_STATS_API __attribute__((visibility("default")))
#endif
