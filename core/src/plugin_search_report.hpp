// What the plugin search saw, for the messages of a sink that was not found
// or a plugin path that enables nothing: each folder searched, the setting
// that named it, the plugin files in it, and plugins one folder further down
// (a build folder whose sinks sit in plugins/, a prefix's lib/regiontrace).
#pragma once

#include "regiontrace/export.hpp"

#include <string>
#include <utility>
#include <vector>

namespace regiontrace::detail {

// "/a (env REGIONTRACE_PLUGIN_PATH): regiontrace_sink_x.so; /b (built-in
// sinks): 6 plugins". Folders the user named list their .so files by name
// (those not named regiontrace_sink_<name>.so are said to be ignored).
REGIONTRACE_INTERNAL std::string describe_plugin_search(
    const std::vector<std::pair<std::string, std::string>>& dirs);

}  // namespace regiontrace::detail
