#pragma once

#if defined(_WIN32)
#define REGIONTRACE_API __declspec(dllexport)
#else
#define REGIONTRACE_API __attribute__((visibility("default")))
#endif
