// ABI version of the plugin contract and the symbol-visibility macro.
//
// Every change to a type or virtual function in plugins/sdk/ is an ABI change
// and bumps kAbiVersion. The loader refuses a plugin built against another
// version instead of calling into a vtable whose layout it cannot trust.
#pragma once

namespace regiontrace {

inline constexpr int kAbiVersion = 1;

}  // namespace regiontrace

#if defined(_WIN32)
#define REGIONTRACE_PLUGIN_EXPORT __declspec(dllexport)
#else
#define REGIONTRACE_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif
