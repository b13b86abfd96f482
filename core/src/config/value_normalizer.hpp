// Turns a raw tree value into the typed, canonical form of its KeySpec:
// booleans as true/false, integer lists expanded, ${...} expanded, paths made
// absolute. Problems are appended to `errors` naming key, value and source.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "../rank_info.hpp"
#include "config_tree.hpp"
#include "regiontrace/sdk/config_schema.hpp"

namespace regiontrace::detail {

struct ExpansionContext {
  int rank = 0;
  int local_rank = 0;
  int world_size = 1;
  std::string job_id = "local";
  long pid = 0;
  std::string output_dir;  // empty while output_dir itself is expanded
  const Environment* env = nullptr;
};

std::optional<std::vector<std::string>> normalize_value(
    const KeySpec& spec, const ConfigTree::Node& node, const std::string& key,
    const std::string& source, const ExpansionContext& ctx, std::vector<std::string>* errors);

// The default of a spec in canonical form (lists split, paths left relative).
std::vector<std::string> default_items(const KeySpec& spec);

std::optional<std::string> expand_placeholders(const std::string& text, const std::string& key,
                                               const std::string& source,
                                               const ExpansionContext& ctx,
                                               std::vector<std::string>* errors);
bool parse_bool(const std::string& text, bool* out);

}  // namespace regiontrace::detail
