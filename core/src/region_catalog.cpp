// Region catalogs: YAML lists of region names with descriptions.
//
//   short_prefix: profiler_region_     # optional: "model_loading" resolves too
//   regions:
//     - name: profiler_region_model_loading
//       description: pipeline/module loading
//       color: "#4C72B0"               # optional, for NVTX and trace viewers
//
// A bare top-level list of {name, description} is accepted as well.
#include <yaml-cpp/yaml.h>

#include "config/bounded_text_file.hpp"
#include "region_registry.hpp"
#include "regiontrace/regiontrace.hpp"
#include "regiontrace/sdk/color.hpp"

namespace regiontrace::detail {
namespace {

std::string where(const std::string& source, const YAML::Node& node) {
  return source + ":" + std::to_string(node.Mark().line + 1);
}

void declare_entries(const YAML::Node& list, const std::string& source, RegionRegistry& registry) {
  if (!list.IsSequence()) {
    throw Error(where(source, list) + ": `regions` must be a list of {name, description}");
  }
  // An entry aliased thousands of times (`- *big`) would copy its
  // description into the registry each time: bounded like the file.
  std::uintmax_t bytes = 0;
  for (const YAML::Node& item : list) {
    if (!item.IsMap() || !item["name"] || !item["name"].IsScalar()) {
      throw Error(where(source, item) + ": each region needs a `name` (and a `description`)");
    }
    for (const auto& kv : item) {
      const std::string key = kv.first.as<std::string>();
      if (key != "name" && key != "description" && key != "color") {
        throw Error(where(source, kv.first) + ": unknown key `" + key +
                    "` in a region entry (valid: name, description, color)");
      }
    }
    const std::string name = item["name"].as<std::string>();
    if (name.empty()) throw Error(where(source, item) + ": region name is empty");
    std::string description;
    if (item["description"]) description = item["description"].as<std::string>();
    std::uint32_t color = 0;
    if (item["color"]) {
      const std::string text = item["color"].as<std::string>();
      if (!parse_color(text, &color)) {
        throw Error(where(source, item["color"]) + ": color `" + text +
                    "` is not #RRGGBB or 0xRRGGBB");
      }
    }
    bytes += name.size() + description.size();
    if (bytes > kMaxCatalogBytes) {
      throw Error(where(source, item) + ": the catalog expands to more than " +
                  std::to_string(kMaxCatalogBytes >> 20) +
                  " MiB of names and descriptions (an alias used too often?)");
    }
    registry.declare(name, description, color, source);
  }
}

}  // namespace

bool parse_color(std::string_view text, std::uint32_t* out) {
  std::uint32_t v = 0;
  if (!parse_rgb(text, &v)) return false;
  *out = v == 0 ? 0x000001 : v;  // 0 means "none given"; pure black stays visible
  return true;
}

void load_region_catalog(const std::string& yaml_text, const std::string& source,
                         RegionRegistry& registry) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    throw Error(source + ":" + std::to_string(e.mark.line + 1) + ":" +
                std::to_string(e.mark.column + 1) + ": malformed YAML: " + e.msg);
  }
  try {
    if (root.IsSequence()) {
      declare_entries(root, source, registry);
      return;
    }
    if (!root.IsMap()) {
      throw Error(source + ": a region catalog is a map with `regions:` or a list of regions");
    }
    for (const auto& kv : root) {
      const std::string key = kv.first.as<std::string>();
      if (key != "regions" && key != "short_prefix") {
        throw Error(where(source, kv.first) + ": unknown key `" + key +
                    "` in a region catalog (valid: regions, short_prefix)");
      }
    }
    if (root["short_prefix"]) registry.add_short_prefix(root["short_prefix"].as<std::string>());
    if (root["regions"]) declare_entries(root["regions"], source, registry);
  } catch (const YAML::Exception& e) {
    throw Error(source + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
}

void load_region_catalog_file(const std::string& path, RegionRegistry& registry) {
  load_region_catalog(read_bounded_text_file(path, "region catalog", kMaxCatalogBytes), path,
                      registry);
}

}  // namespace regiontrace::detail
