#include "plugin_loader.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <boost/dll/shared_library.hpp>
#include <filesystem>
#include <map>
#include <mutex>

#include "plugin_build_note.hpp"
#include "regiontrace/regiontrace.hpp"

namespace regiontrace::detail {
namespace {

namespace fs = std::filesystem;
constexpr const char* kPrefix = "regiontrace_sink_";

struct Cache {
  std::mutex mutex;
  std::map<std::string, std::unique_ptr<LoadedPlugin>> by_path;
  std::vector<boost::dll::shared_library> libraries;  // kept loaded for the process
};

Cache& cache() {
  static Cache* c = new Cache();
  return *c;
}

std::string sink_name_from_file(const fs::path& p) {
  std::string stem = p.filename().string();
  if (p.extension() != ".so") return {};
  stem = stem.substr(0, stem.size() - 3);
  if (stem.rfind("lib", 0) == 0) stem = stem.substr(3);
  if (stem.rfind(kPrefix, 0) != 0) return {};
  return stem.substr(std::string(kPrefix).size());
}

// "ABI 2, SDK 1.0.0, GCC 12.2.0, libstdc++ 12 (20220819), _GLIBCXX_USE_CXX11_ABI=1"
std::string describe(const regiontrace_build_info& b) {
  std::string out = "ABI " + std::to_string(b.abi_version);
  if (b.size < sizeof(regiontrace_build_info)) return out;  // a future, smaller struct? never
  auto text = [](const char* s) { return s != nullptr ? std::string(s) : std::string("?"); };
  out += ", SDK " + text(b.sdk_version) + ", " + text(b.compiler) + ", " + text(b.stdlib);
  if (b.cxx11_abi >= 0) out += ", _GLIBCXX_USE_CXX11_ABI=" + std::to_string(b.cxx11_abi);
  return out;
}

std::string abi_mismatch_message(const PluginFile& file, const std::string& plugin_abi,
                                 const std::string& plugin_build) {
  return "plugin " + file.path + " (" + file.origin +
         ") was built against regiontrace plugin ABI version " + plugin_abi + " (" + plugin_build +
         "), but this libregiontrace speaks version " + std::to_string(kAbiVersion) + " (" +
         describe(kBuildInfo) + "); rebuild the plugin against this SDK";
}

// std::string, std::vector and std::map cross the boundary: the plugin's
// standard library (and libstdc++'s string ABI) must be the host's.
bool same_standard_library(int stdlib_kind, int cxx11_abi) {
  return stdlib_kind == kBuildInfo.stdlib_kind &&
         (stdlib_kind != 1 || cxx11_abi == kBuildInfo.cxx11_abi);
}

std::string stdlib_mismatch_message(const PluginFile& file, const std::string& plugin_build) {
  return "plugin " + file.path + " (" + file.origin +
         ") was built with another C++ standard library ABI (" + plugin_build +
         ") than this libregiontrace (" + describe(kBuildInfo) +
         "); std::string, std::vector and std::map cross the plugin boundary, so "
         "rebuild the plugin with the same standard library and "
         "_GLIBCXX_USE_CXX11_ABI setting";
}

// Reads the plugin's plain-C build info before any C++ type of it is
// trusted, and refuses another ABI version or another standard-library ABI
// (std::string, std::vector and std::map cross the boundary).
void check_build(const boost::dll::shared_library& lib, const PluginFile& file) {
  if (!lib.has("regiontrace_plugin_build_info")) {
    if (lib.has("regiontrace_plugin_abi_version")) {
      // An SDK before ABI 2 exported only its version number.
      const int abi = lib.get<int()>("regiontrace_plugin_abi_version")();
      throw Error(abi_mismatch_message(file, std::to_string(abi), "an SDK without build info"));
    }
    throw Error("plugin " + file.path + " (" + file.origin +
                ") is not a regiontrace plugin: it does not export "
                "regiontrace_plugin_build_info/regiontrace_plugin_descriptor (a sink is "
                "exported with REGIONTRACE_SINK_PLUGIN)");
  }
  const regiontrace_build_info* b =
      lib.get<const regiontrace_build_info*()>("regiontrace_plugin_build_info")();
  if (b == nullptr || b->size < 2 * sizeof(std::uint32_t)) {
    throw Error("plugin " + file.path + " (" + file.origin +
                ") exports an empty regiontrace_plugin_build_info");
  }
  if (b->abi_version != static_cast<std::uint32_t>(kAbiVersion)) {
    throw Error(abi_mismatch_message(file, std::to_string(b->abi_version), describe(*b)));
  }
  if (b->size < sizeof(regiontrace_build_info)) {
    throw Error("plugin " + file.path + " (" + file.origin +
                ") exports a truncated regiontrace_plugin_build_info");
  }
  if (!same_standard_library(b->stdlib_kind, b->cxx11_abi)) {
    throw Error(stdlib_mismatch_message(file, describe(*b)));
  }
}

}  // namespace

std::string PluginLoader::builtin_dir() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&PluginLoader::builtin_dir), &info) == 0 ||
      info.dli_fname == nullptr) {
    return {};
  }
  std::error_code ec;
  fs::path lib = fs::canonical(info.dli_fname, ec);
  if (ec) lib = info.dli_fname;
  return (lib.parent_path() / "regiontrace" / "plugins").string();
}

std::vector<PluginFile> PluginLoader::discover(
    const std::vector<std::pair<std::string, std::string>>& dirs,
    std::vector<std::string>* errors) {
  std::vector<PluginFile> found;
  std::map<std::string, std::size_t> by_name;
  auto add = [&](PluginFile f) {
    if (!f.sink_name.empty()) {
      auto it = by_name.find(f.sink_name);
      if (it != by_name.end()) {
        std::error_code ec;
        if (fs::equivalent(found[it->second].path, f.path, ec)) return;
        // Decided by names alone: neither file is loaded, so a file planted
        // on the path under a built-in's name never runs.
        found[it->second].ambiguous = true;
        errors->push_back("sink `" + f.sink_name +
                          "` is provided twice: " + found[it->second].path + " (" +
                          found[it->second].origin + ") and " + f.path + " (" + f.origin +
                          "); neither is loaded; remove one of them from the plugin path");
        return;
      }
      by_name[f.sink_name] = found.size();
    }
    found.push_back(std::move(f));
  };
  for (const auto& [entry, origin] : dirs) {
    if (entry.empty()) continue;
    std::error_code ec;
    const fs::path p(entry);
    if (p.extension() == ".so") {
      if (!fs::exists(p, ec)) {
        errors->push_back("plugin " + entry + " (" + origin + "): no such file");
        continue;
      }
      add(PluginFile{sink_name_from_file(p), fs::absolute(p).string(), origin});
      continue;
    }
    if (!fs::is_directory(p, ec)) {
      // libz.so.1 is a file, not a folder, nor a plugin (not *.so).
      errors->push_back(fs::exists(p, ec)
                            ? "plugin path entry " + entry + " (" + origin +
                                  ") is a file, not a folder; name a folder, or a plugin "
                                  "file regiontrace_sink_<name>.so"
                            : "plugin folder " + entry + " (" + origin + ") does not exist");
      continue;
    }
    std::vector<fs::path> files;
    for (const auto& de : fs::directory_iterator(p, ec)) files.push_back(de.path());
    std::sort(files.begin(), files.end());
    for (const fs::path& f : files) {
      const std::string name = sink_name_from_file(f);
      if (!name.empty()) add(PluginFile{name, fs::absolute(f).string(), origin});
    }
  }
  return found;
}

std::string PluginLoader::refusal(const PluginFile& file) {
  const std::string plugin = "plugin " + file.path + " (" + file.origin + ")";
  if (file.ambiguous) {
    return "sink `" + file.sink_name + "` is provided twice on the plugin path; " + plugin +
           " is not loaded";
  }
  const FileBuildFacts facts = read_build_facts(file.path);
  if (!facts.error.empty()) return plugin + " cannot be loaded: " + facts.error;
  if (!facts.note) {
    if (facts.exports_build_info || facts.exports_abi_version) {
      // Every plugin of ABI 7 and later carries the note.
      return "plugin " + file.path + " (" + file.origin +
             ") was built against an earlier regiontrace SDK (ABI before 7: its file has no "
             "build-info note), but this libregiontrace speaks version " +
             std::to_string(kAbiVersion) + " (" + describe(kBuildInfo) +
             "); rebuild the plugin against this SDK";
    }
    return plugin +
           " is not a regiontrace plugin: it has no regiontrace build-info note and does not "
           "export regiontrace_plugin_build_info/regiontrace_plugin_descriptor (a sink is "
           "exported with REGIONTRACE_SINK_PLUGIN)";
  }
  const BuildNote& b = *facts.note;
  if (b.abi_version != static_cast<std::uint32_t>(kAbiVersion)) {
    return abi_mismatch_message(file, std::to_string(b.abi_version), b.text);
  }
  if (!same_standard_library(b.stdlib_kind, b.cxx11_abi)) {
    return stdlib_mismatch_message(file, b.text);
  }
  return {};
}

const LoadedPlugin& PluginLoader::load(const PluginFile& file) {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  auto it = c.by_path.find(file.path);
  if (it != c.by_path.end()) return *it->second;
  // Before dlopen: a refused file's constructors never run.
  if (const std::string why = refusal(file); !why.empty()) throw Error(why);

  boost::dll::shared_library lib;
  boost::dll::fs::error_code ec;
  lib.load(file.path, boost::dll::load_mode::rtld_lazy | boost::dll::load_mode::rtld_local, ec);
  if (ec) {
    const char* why = dlerror();
    throw Error("plugin " + file.path + " (" + file.origin +
                ") cannot be loaded: " + (why != nullptr ? std::string(why) : ec.message()));
  }
  check_build(lib, file);
  const PluginDescriptor* d = lib.get<const PluginDescriptor*()>("regiontrace_plugin_descriptor")();
  if (d == nullptr || d->sink_name == nullptr || d->create == nullptr) {
    throw Error("plugin " + file.path + " exports an empty plugin descriptor");
  }
  if (!file.sink_name.empty() && file.sink_name != d->sink_name) {
    throw Error("plugin " + file.path + " is named for sink `" + file.sink_name +
                "` but exports sink `" + d->sink_name + "`; rename the file or the sink");
  }
  auto loaded = std::make_unique<LoadedPlugin>();
  loaded->sink_name = d->sink_name;
  loaded->path = file.path;
  loaded->descriptor = d;
  try {
    loaded->schema = d->schema != nullptr ? d->schema() : SinkSchema{};
  } catch (const std::exception& e) {
    throw Error("plugin " + file.path + ": its schema() threw: " + e.what());
  }
  c.libraries.push_back(std::move(lib));
  auto& ref = *loaded;
  c.by_path.emplace(file.path, std::move(loaded));
  return ref;
}

}  // namespace regiontrace::detail
