// Finds sink plugins on disk and loads them with Boost.DLL.
//
// A plugin folder holds files named regiontrace_sink_<name>.so, so a sink's
// name is known without loading it (loading torch_profiler pulls in libtorch:
// only sinks that run are loaded). A path entry may also name a .so file.
#pragma once

#include "regiontrace/export.hpp"

#include <memory>
#include <string>
#include <vector>

#include "regiontrace/plugin.hpp"

namespace regiontrace::detail {

struct PluginFile {
  std::string sink_name;  // empty for an explicit file until it is loaded
  std::string path;
  std::string origin;  // which setting named its folder, for messages
  // Another file on the path is named for the same sink: discover()
  // reported it, and neither file is ever loaded.
  bool ambiguous = false;
};

struct LoadedPlugin {
  std::string sink_name;
  std::string path;
  const PluginDescriptor* descriptor = nullptr;
  SinkSchema schema;
};

// The origin of the built-in folder's plugins: messages list the folders
// users named and only count the built-in ones.
inline constexpr const char* kBuiltinSinksOrigin = "built-in sinks";

class REGIONTRACE_INTERNAL PluginLoader {
 public:
  // <folder of libregiontrace.so>/regiontrace/plugins: the built-in sinks,
  // in the build tree and after `cmake --install` alike.
  static std::string builtin_dir();

  // `dirs` pairs a folder (or .so file) with the setting that named it.
  // Missing folders and files, and two files for one sink name, are errors
  // (the first file of such a name is returned, marked ambiguous). Loads
  // nothing.
  static std::vector<PluginFile> discover(
      const std::vector<std::pair<std::string, std::string>>& dirs,
      std::vector<std::string>* errors);

  // Why `file` would be refused, from the file alone (its build-info note,
  // its dynamic symbols); empty when it may be loaded. Runs none of its code.
  static std::string refusal(const PluginFile& file);

  // Loads (once per process; never unloaded) a file refusal() accepts, and
  // checks its build info and sink name again from the loaded code. Throws
  // regiontrace::Error naming the file and the reason.
  static const LoadedPlugin& load(const PluginFile& file);
};

}  // namespace regiontrace::detail
