// Exports the plugin symbols by hand with an ABI version this build does not
// speak: the loader must refuse it before touching the descriptor.
#include "regiontrace/plugin.hpp"

extern "C" REGIONTRACE_PLUGIN_EXPORT int regiontrace_plugin_abi_version() {
  return regiontrace::kAbiVersion + 41;
}
extern "C" REGIONTRACE_PLUGIN_EXPORT const regiontrace::PluginDescriptor*
regiontrace_plugin_descriptor() {
  return nullptr;
}
