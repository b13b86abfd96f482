#include "config_tree.hpp"

namespace regiontrace::detail {

std::vector<std::string> split_list(const std::string& text, char separator) {
  std::vector<std::string> out;
  std::string item;
  auto push = [&] {
    const auto b = item.find_first_not_of(" \t");
    const auto e = item.find_last_not_of(" \t");
    if (b != std::string::npos) out.push_back(item.substr(b, e - b + 1));
    item.clear();
  };
  for (char c : text) {
    if (c == separator) {
      push();
    } else {
      item += c;
    }
  }
  push();
  return out;
}

void ConfigTree::set(const std::string& path, const std::string& value, const std::string& source) {
  Node& n = root_.put(key(path), value);
  while (!n.empty()) n.pop_back();  // a scalar replaces a list given by a lower layer
  sources_[path] = source;
}

void ConfigTree::set_list(const std::string& path, const std::vector<std::string>& items,
                          const std::string& source) {
  Node list;
  for (const std::string& i : items) list.push_back(Node::value_type("", Node(i)));
  root_.put_child(key(path), list);
  sources_[path] = source;
}

void ConfigTree::ensure(const std::string& path, const std::string& source) {
  if (root_.get_child_optional(key(path))) return;
  root_.put_child(key(path), Node());
  sources_[path] = source;
}

const ConfigTree::Node* ConfigTree::find(const std::string& path) const {
  if (path.empty()) return &root_;
  auto c = root_.get_child_optional(key(path));
  return c ? &*c : nullptr;
}

std::vector<std::string> ConfigTree::keys(const std::string& path) const {
  std::vector<std::string> out;
  const Node* n = find(path);
  if (n == nullptr) return out;
  for (const auto& kv : *n) {
    if (!kv.first.empty()) out.push_back(kv.first);
  }
  return out;
}

bool ConfigTree::is_list(const Node& node) {
  return !node.empty() && node.begin()->first.empty();
}

std::vector<std::string> ConfigTree::items(const Node& node) {
  if (is_list(node)) {
    std::vector<std::string> out;
    for (const auto& kv : node) out.push_back(kv.second.data());
    return out;
  }
  return split_list(node.data());
}

std::string ConfigTree::source(const std::string& path) const {
  std::string p = path;
  while (true) {
    auto it = sources_.find(p);
    if (it != sources_.end()) return it->second;
    const auto dot = p.rfind('.');
    if (dot == std::string::npos) return "default";
    p = p.substr(0, dot);
  }
}

}  // namespace regiontrace::detail
