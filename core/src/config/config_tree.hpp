// The merged configuration: one Boost.PropertyTree plus, for every value, the
// place it came from ("profile.yaml:12", "env REGIONTRACE_OUTPUT_DIR",
// "program", "default"). Lists are nodes whose children have empty keys,
// as in Boost's own JSON mapping.
#pragma once

#include "regiontrace/export.hpp"

#include <boost/property_tree/ptree.hpp>
#include <map>
#include <string>
#include <vector>

namespace regiontrace::detail {

class REGIONTRACE_INTERNAL ConfigTree {
 public:
  using Node = boost::property_tree::ptree;

  void set(const std::string& path, const std::string& value, const std::string& source);
  void set_list(const std::string& path, const std::vector<std::string>& items,
                const std::string& source);
  // An empty map node ("nvtx:" with nothing under it), kept so the sink counts
  // as configured.
  void ensure(const std::string& path, const std::string& source);

  const Node* find(const std::string& path) const;
  bool has(const std::string& path) const { return find(path) != nullptr; }
  // Child keys of a map node, in insertion order.
  std::vector<std::string> keys(const std::string& path) const;
  // Items of a list node, or of a scalar split at commas (environment form).
  static std::vector<std::string> items(const Node& node);
  static bool is_list(const Node& node);
  std::string source(const std::string& path) const;

  const Node& root() const { return root_; }

 private:
  static Node::path_type key(const std::string& path) { return Node::path_type(path, '.'); }
  Node root_;
  std::map<std::string, std::string> sources_;
};

REGIONTRACE_INTERNAL std::vector<std::string> split_list(const std::string& text,
                                                         char separator = ',');

}  // namespace regiontrace::detail
