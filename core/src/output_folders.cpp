#include "output_folders.hpp"

#include <filesystem>

namespace regiontrace::detail {

namespace fs = std::filesystem;

std::string OutputFolders::prepare(const std::string& dir) {
  std::error_code ec;
  std::vector<fs::path> missing;
  for (fs::path p = fs::path(dir).lexically_normal(); !p.empty() && !fs::exists(p, ec);
       p = p.parent_path()) {
    missing.push_back(p);
    if (p == p.parent_path()) break;
  }
  fs::create_directories(dir, ec);
  if (ec) return "cannot be created: " + ec.message();
  if (!fs::is_directory(dir, ec)) return "exists but is not a folder";
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) created_.push_back(it->string());
  return {};
}

void OutputFolders::remove_unused(const std::set<std::string>& kept) {
  std::set<std::string> needed;
  for (const std::string& k : kept) {
    for (fs::path p = fs::path(k).lexically_normal(); !p.empty() && p != p.parent_path();
         p = p.parent_path()) {
      needed.insert(p.string());
    }
  }
  for (auto it = created_.rbegin(); it != created_.rend(); ++it) {
    if (needed.count(*it) != 0) continue;
    std::error_code ec;
    if (fs::is_directory(*it, ec) && fs::is_empty(*it, ec)) fs::remove(*it, ec);
  }
  created_.clear();
}

}  // namespace regiontrace::detail
