// Which regions a sink selected: exact names (short ones resolved), `*`-style
// globs, or everything.
#pragma once

#include "regiontrace/export.hpp"

#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace regiontrace::detail {

class RegionRegistry;

class REGIONTRACE_INTERNAL RegionFilter {
 public:
  RegionFilter() = default;  // selects everything

  // `origin` says where the list came from, for messages ("sinks.nvtx.regions
  // (profile.yaml:7)"). Unknown exact names are warned about once, with the
  // known regions listed, and ignored (the seed's rule); a list that selected
  // names but kept none and has no glob appends an error to `errors`.
  static RegionFilter compile(const std::vector<std::string>& entries, const std::string& origin,
                              const RegionRegistry& registry, std::vector<std::string>* errors);

  bool everything() const { return everything_; }
  bool matches(std::string_view name) const;
  std::string describe() const;

 private:
  bool everything_ = true;
  std::unordered_set<std::string> exact_;
  std::vector<std::string> globs_;
  std::vector<std::string> short_prefixes_;
};

REGIONTRACE_INTERNAL bool is_glob(std::string_view pattern);

}  // namespace regiontrace::detail
