#include "plugin_search_report.hpp"

#include <algorithm>
#include <filesystem>

#include "plugin_loader.hpp"
#include "suggest.hpp"

namespace regiontrace::detail {
namespace {

namespace fs = std::filesystem;

// The names PluginLoader::discover takes: [lib]regiontrace_sink_<name>.so.
bool is_plugin_name(std::string file) {
  if (file.rfind("lib", 0) == 0) file = file.substr(3);
  return file.rfind("regiontrace_sink_", 0) == 0 && file.size() > 20 &&
         file.compare(file.size() - 3, 3, ".so") == 0;
}

std::vector<std::string> so_files(const fs::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (it->path().extension() == ".so" && it->is_regular_file(ec)) out.push_back(name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Subfolders (one level) holding plugins: the folder the user meant.
std::vector<std::string> plugin_subfolders(const fs::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (!it->is_directory(ec)) continue;
    std::vector<std::string> plugins;
    for (const std::string& f : so_files(it->path())) {
      if (is_plugin_name(f)) plugins.push_back(f);
    }
    if (!plugins.empty()) out.push_back(it->path().string() + " holds " + join(plugins, ", "));
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string describe_folder(const std::string& entry, const std::string& origin) {
  std::string out = entry + " (" + origin + "): ";
  std::error_code ec;
  const fs::path p(entry);
  if (p.extension() == ".so") return out + (fs::exists(p, ec) ? "a plugin file" : "no such file");
  if (!fs::is_directory(p, ec)) return out + "not a folder";
  std::vector<std::string> plugins, others;
  for (const std::string& f : so_files(p)) (is_plugin_name(f) ? plugins : others).push_back(f);
  if (origin == kBuiltinSinksOrigin) return out + std::to_string(plugins.size()) + " plugins";
  out += plugins.empty() ? "no regiontrace_sink_<name>.so" : join(plugins, ", ");
  if (!others.empty()) {
    out += "; ignored, not named regiontrace_sink_<name>.so: " + join(others, ", ");
  }
  if (plugins.empty()) {
    const std::vector<std::string> below = plugin_subfolders(p);
    if (!below.empty()) out += "; but " + join(below, ", ") + ": put that folder in the path";
  }
  return out;
}

}  // namespace

std::string describe_plugin_search(const std::vector<std::pair<std::string, std::string>>& dirs) {
  std::vector<std::string> parts;
  for (const auto& [entry, origin] : dirs) {
    if (!entry.empty()) parts.push_back(describe_folder(entry, origin));
  }
  return parts.empty() ? "no plugin folder" : join(parts, "; ");
}

}  // namespace regiontrace::detail
