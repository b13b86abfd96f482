#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <map>

#include "../suggest.hpp"
#include "bounded_text_file.hpp"
#include "config_sources.hpp"
#include "regiontrace/regiontrace.hpp"
#include "shipped_profiles.hpp"

namespace regiontrace::detail {
namespace {

namespace fs = std::filesystem;

std::string at(const std::string& source, const YAML::Node& node) {
  return source + ":" + std::to_string(node.Mark().line + 1);
}

// Aliases make a profile a graph: `sinks: &s {timeline: *s}` is a cycle,
// and one large value aliased thousands of times expands to gigabytes.
// What a profile expands to is bounded in depth (profiles nest three or
// four maps) and in text (the size a profile file may have).
constexpr int kMaxNesting = 16;
constexpr std::uintmax_t kMaxExpandedBytes = 4 * kMaxProfileBytes;

struct Expansion {
  std::uintmax_t bytes = 0;

  void add(const std::string& source, const YAML::Node& node, std::size_t n) {
    bytes += n;
    if (bytes > kMaxExpandedBytes) {
      throw Error(at(source, node) + ": the profile expands to more than " +
                  std::to_string(kMaxExpandedBytes >> 20) +
                  " MiB of settings (an alias used too often?); write the values out");
    }
  }
};

void merge_map(const YAML::Node& map, const std::string& prefix, const std::string& source,
               ConfigTree& tree, int depth, Expansion& expansion) {
  if (depth > kMaxNesting) {
    throw Error(at(source, map) + ": `" + prefix + "` nests maps deeper than " +
                std::to_string(kMaxNesting) + " levels (an alias that contains itself?)");
  }
  std::map<std::string, int> seen;  // name -> line, to refuse a key given twice
  for (const auto& kv : map) {
    if (!kv.first.IsScalar()) throw Error(at(source, kv.first) + ": keys must be plain names");
    const std::string name = kv.first.as<std::string>();
    if (const auto [it, fresh] = seen.emplace(name, kv.first.Mark().line + 1); !fresh) {
      throw Error(at(source, kv.first) + ": `" + name + "` is given twice (first at line " +
                  std::to_string(it->second) + "); keep one");
    }
    if (name.empty() || name.find('.') != std::string::npos) {
      throw Error(at(source, kv.first) + ": key `" + name +
                  "` is not a plain name (no dots; nest maps instead)");
    }
    if (prefix.empty() && name == "include") continue;  // handled before the rest
    const std::string path = prefix.empty() ? name : prefix + "." + name;
    const YAML::Node& v = kv.second;
    const std::string where = at(source, kv.first);
    if (path == "sinks" && !v.IsMap() && !v.IsNull()) {
      throw Error(where + ": `sinks` maps sink names to their settings " +
                  "(sinks: {torch_profiler: {regions: [...]}, nvtx: {}}), not a " +
                  (v.IsSequence() ? "list" : "value"));
    }
    expansion.add(source, kv.first, path.size());
    if (v.IsMap()) {
      tree.ensure(path, where);
      merge_map(v, path, source, tree, depth + 1, expansion);
    } else if (v.IsSequence()) {
      std::vector<std::string> items;
      for (const YAML::Node& item : v) {
        if (!item.IsScalar()) {
          throw Error(at(source, item) + ": `" + path + "` must be a list of plain values");
        }
        items.push_back(item.as<std::string>());
        expansion.add(source, item, items.back().size());
      }
      tree.set_list(path, items, where);
    } else if (v.IsNull()) {
      tree.ensure(path, where);
    } else {
      std::string value = v.as<std::string>();
      expansion.add(source, v, value.size());
      tree.set(path, std::move(value), where);
    }
  }
}

void load_node(const YAML::Node& root, const std::string& source, const fs::path& base,
               ConfigTree& tree, std::vector<std::string>& chain);

void load_file(const std::string& path, ConfigTree& tree, std::vector<std::string>& chain) {
  std::error_code ec;
  fs::path abs = fs::weakly_canonical(fs::absolute(path), ec);
  if (ec) abs = fs::absolute(path);
  for (const std::string& c : chain) {
    if (c == abs.string())
      throw Error("profile " + path + " includes itself (through " + chain.front() + ")");
  }
  const std::string text = read_bounded_text_file(abs.string(), "profile", kMaxProfileBytes);
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw Error(path + ":" + std::to_string(e.mark.line + 1) + ":" +
                std::to_string(e.mark.column + 1) + ": malformed YAML: " + e.msg);
  }
  chain.push_back(abs.string());
  load_node(root, path, abs.parent_path(), tree, chain);
  chain.pop_back();
}

void load_node(const YAML::Node& root, const std::string& source, const fs::path& base,
               ConfigTree& tree, std::vector<std::string>& chain) {
  try {
    if (!root || root.IsNull()) return;
    if (!root.IsMap()) {
      throw Error(source + ":" + std::to_string(root.Mark().line + 1) +
                  ": a profile is a map of settings (output_dir, regions, sinks, ...)");
    }
    if (const YAML::Node inc = root["include"]) {
      std::vector<std::string> files;
      if (inc.IsScalar()) {
        files.push_back(inc.as<std::string>());
      } else if (inc.IsSequence()) {
        for (const YAML::Node& f : inc) {
          if (!f.IsScalar()) throw Error(at(source, f) + ": `include` lists file names");
          files.push_back(f.as<std::string>());
        }
      } else {
        throw Error(at(source, inc) + ": `include` is a file name or a list of them");
      }
      for (const std::string& f : files) {
        const fs::path p = fs::path(f).is_absolute() ? fs::path(f) : base / f;
        load_file(p.string(), tree, chain);
      }
    }
    Expansion expansion;
    merge_map(root, "", source, tree, 0, expansion);
  } catch (const YAML::Exception& e) {
    throw Error(source + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
}

}  // namespace

void load_profile_file(const std::string& path, ConfigTree& tree) {
  const std::string file = resolve_profile_path(path);
  std::error_code ec;
  if (file == path && path.find('/') == std::string::npos && !fs::exists(path, ec)) {
    const std::vector<std::string> shipped = shipped_profile_names();
    if (!shipped.empty()) {
      throw Error("profile " + path + ": no such file in the working folder, and no shipped " +
                  "profile has that name" + did_you_mean(path, shipped) +
                  " (shipped: " + join(shipped, ", ") + ")");
    }
  }
  std::vector<std::string> chain;
  load_file(file, tree, chain);
}

void load_profile_text(const std::string& yaml, const std::string& source, ConfigTree& tree) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml);
  } catch (const YAML::Exception& e) {
    throw Error(source + ":" + std::to_string(e.mark.line + 1) + ":" +
                std::to_string(e.mark.column + 1) + ": malformed YAML: " + e.msg);
  }
  std::vector<std::string> chain;
  load_node(root, source, fs::current_path(), tree, chain);
}

}  // namespace regiontrace::detail
