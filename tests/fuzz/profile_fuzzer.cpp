// libFuzzer target: a YAML profile as `REGIONTRACE_CONFIG` would name it.
// Any input either merges into the tree or throws regiontrace::Error (the
// file/line/key message every start-up error carries); anything else, a
// crash, a leak or a hang is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "config/config_sources.hpp"
#include "config/config_tree.hpp"
#include "regiontrace/regiontrace.hpp"

namespace {

// Visits every node as validation later does, so the tree's shape is used.
std::size_t walk(const regiontrace::detail::ConfigTree::Node& node) {
  std::size_t n = 1 + node.data().size();
  if (regiontrace::detail::ConfigTree::is_list(node)) {
    n += regiontrace::detail::ConfigTree::items(node).size();
  }
  for (const auto& child : node) n += walk(child.second);
  return n;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string yaml(reinterpret_cast<const char*>(data), size);
  regiontrace::detail::ConfigTree tree;
  try {
    regiontrace::detail::load_profile_text(yaml, "fuzz.yaml", tree);
  } catch (const regiontrace::Error&) {
    return 0;
  }
  volatile std::size_t visited = walk(tree.root());
  (void)visited;
  return 0;
}
