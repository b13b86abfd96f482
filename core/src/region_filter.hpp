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
  // (profile.yaml:7)"). An exact name no region has yet is kept: regions
  // register when the program first reaches them. Only a name close to a
  // catalog name is taken for a typo: warned about once, with the suggestion,
  // and ignored (the seed's rule). A list whose every entry was such a typo
  // selects nothing: that appends an error to `errors`.
  static RegionFilter compile(const std::vector<std::string>& entries, const std::string& origin,
                              const RegionRegistry& registry, std::vector<std::string>* errors);

  bool everything() const { return everything_; }
  bool matches(std::string_view name) const;
  std::string describe() const;
  const std::string& origin() const { return origin_; }
  // The exact names no region had when the filter was compiled.
  const std::vector<std::string>& awaited() const { return awaited_; }

 private:
  bool everything_ = true;
  std::string origin_;
  std::unordered_set<std::string> exact_;
  std::vector<std::string> awaited_;
  std::vector<std::string> globs_;
  std::vector<std::string> short_prefixes_;
};

REGIONTRACE_INTERNAL bool is_glob(std::string_view pattern);

}  // namespace regiontrace::detail
