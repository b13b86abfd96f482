#include "region_spelling.hpp"

#include <map>

#include "regiontrace/inspect.hpp"

namespace regiontrace::cli {
namespace {

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (std::size_t slash; (slash = path.find('/', start)) != std::string::npos; start = slash + 1) {
    parts.push_back(path.substr(start, slash - start));
  }
  parts.push_back(path.substr(start));
  return parts;
}

// Each part replaced by its entry in `to`, when it has one.
std::string respelt(const std::vector<std::string>& parts,
                    const std::map<std::string, std::string>& to) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += '/';
    auto it = to.find(parts[i]);
    out += it == to.end() ? parts[i] : it->second;
  }
  return out;
}

}  // namespace

std::vector<std::string> catalog_spellings(const std::string& name_or_path) {
  std::map<std::string, std::string> full_of;   // short -> full
  std::map<std::string, std::string> short_of;  // full -> short
  for (const inspect::RegionInfo& r : inspect::list_regions({}).regions) {
    if (r.short_name.empty()) continue;
    full_of.emplace(r.short_name, r.name);
    short_of.emplace(r.name, r.short_name);
  }
  const std::vector<std::string> parts = split_path(name_or_path);
  std::vector<std::string> out;
  for (const auto* to : {&full_of, &short_of}) {
    std::string other = respelt(parts, *to);
    if (other != name_or_path && (out.empty() || out.front() != other)) {
      out.push_back(std::move(other));
    }
  }
  return out;
}

}  // namespace regiontrace::cli
