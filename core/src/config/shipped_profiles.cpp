#include "shipped_profiles.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <filesystem>

namespace regiontrace::detail {
namespace fs = std::filesystem;

std::string shipped_profiles_dir() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&shipped_profiles_dir), &info) == 0 ||
      info.dli_fname == nullptr) {
    return {};
  }
  std::error_code ec;
  fs::path lib = fs::canonical(info.dli_fname, ec);
  if (ec) return {};
  // REGIONTRACE_PROFILES_FROM_LIBDIR: the install layout's path from the
  // library's folder to the profiles; the build tree is laid out the same.
  const fs::path dir = (lib.parent_path() / REGIONTRACE_PROFILES_FROM_LIBDIR).lexically_normal();
  return fs::is_directory(dir, ec) ? dir.string() : std::string();
}

std::string resolve_profile_path(const std::string& path) {
  std::error_code ec;
  if (path.empty() || path.find('/') != std::string::npos || fs::exists(path, ec)) return path;
  const std::string dir = shipped_profiles_dir();
  if (dir.empty()) return path;
  const fs::path shipped = fs::path(dir) / path;
  return fs::is_regular_file(shipped, ec) ? shipped.string() : path;
}

std::vector<std::string> shipped_profile_names() {
  std::vector<std::string> names;
  const std::string dir = shipped_profiles_dir();
  if (dir.empty()) return names;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    const fs::path& p = e.path();
    if (p.extension() == ".yaml" || p.extension() == ".yml") names.push_back(p.filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace regiontrace::detail
