// A plugin as an SDK before ABI 2 built it: only the plain version number,
// no build info, and a version this build does not speak. The loader must
// refuse it before touching the descriptor.
#include "regiontrace/plugin.hpp"

extern "C" REGIONTRACE_PLUGIN_EXPORT int regiontrace_plugin_abi_version() {
  return regiontrace::kAbiVersion + 41;
}
extern "C" REGIONTRACE_PLUGIN_EXPORT const regiontrace::PluginDescriptor*
regiontrace_plugin_descriptor() {
  return nullptr;
}
