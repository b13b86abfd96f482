#include "region_filter.hpp"

#include "logger.hpp"
#include "region_registry.hpp"
#include "regiontrace/sdk/glob.hpp"
#include "suggest.hpp"

namespace regiontrace::detail {

bool is_glob(std::string_view pattern) {
  return sdk::is_glob(pattern);
}

RegionFilter RegionFilter::compile(const std::vector<std::string>& entries,
                                   const std::string& origin, const RegionRegistry& registry,
                                   std::vector<std::string>* errors) {
  RegionFilter f;
  if (entries.empty()) return f;
  for (const std::string& e : entries) {
    if (e == "*") return RegionFilter();
  }
  f.everything_ = false;
  f.origin_ = origin;
  f.short_prefixes_ = registry.short_prefixes();

  std::vector<std::string> catalog;
  std::vector<std::string> spellings;  // catalog names and their short forms
  for (const RegionEntry* e : registry.declared()) {
    if (!e->in_catalog) continue;
    catalog.push_back(e->name);
    spellings.push_back(e->name);
    for (const std::string& p : f.short_prefixes_) {
      if (e->name.rfind(p, 0) == 0) spellings.push_back(e->name.substr(p.size()));
    }
  }
  std::vector<std::string> ignored;
  for (const std::string& raw : entries) {
    if (raw.empty()) continue;
    if (is_glob(raw)) {
      f.globs_.push_back(raw);
      continue;
    }
    if (auto id = registry.find(raw)) {  // declared, or already registered by use
      f.exact_.insert(registry.entry(*id).name);
      continue;
    }
    const std::string close = closest_match(raw, spellings);
    if (close.empty()) {
      f.exact_.insert(raw);
      f.awaited_.push_back(raw);
      continue;
    }
    ignored.push_back(raw);
    log_once(LogLevel::kWarn, "unknown-region:" + origin + ":" + raw,
             "unknown region `" + raw + "` in " + origin + " (did you mean `" +
                 registry.canonical(close) +
                 "`?), ignored. Catalog regions: " + join(catalog, ", ") +
                 ". A region of your own is selected by its exact name; "
                 "this one is too close to a catalog name to be taken for one.");
  }
  if (f.exact_.empty() && f.globs_.empty()) {
    errors->push_back(origin + ": every region named (" + join(ignored, ", ") +
                      ") looks like a misspelt catalog name and was ignored, so this selects "
                      "nothing. Catalog regions: " +
                      join(catalog, ", "));
  }
  return f;
}

bool RegionFilter::matches(std::string_view name) const {
  if (everything_) return true;
  const std::string n(name);
  // The SDK's glob: the same matcher nvtx `colors` use, fnmatch's meaning.
  if (exact_.count(n) != 0) return true;
  for (const std::string& prefix : short_prefixes_) {
    if (n.compare(0, prefix.size(), prefix) == 0 && exact_.count(n.substr(prefix.size())) != 0) {
      return true;
    }
  }
  for (const std::string& g : globs_) {
    if (sdk::glob_match(g, n)) return true;
    for (const std::string& prefix : short_prefixes_) {
      if (n.compare(0, prefix.size(), prefix) == 0 &&
          sdk::glob_match(g, std::string_view(n).substr(prefix.size()))) {
        return true;
      }
    }
  }
  return false;
}

std::string RegionFilter::describe() const {
  if (everything_) return "all regions";
  std::vector<std::string> parts(exact_.begin(), exact_.end());
  parts.insert(parts.end(), globs_.begin(), globs_.end());
  return join(parts, ", ");
}

}  // namespace regiontrace::detail
