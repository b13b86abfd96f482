// Which colour a region's NVTX range gets: a rule from the profile
// (`colors: ["denoise*=#C44E52"]`), else the catalog's colour, else one
// derived from the name, so a region keeps its colour from run to run
// without anyone choosing it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace regiontrace::nvtx {

// One `pattern=#RRGGBB` item of the `colors` key. The pattern is a region
// name or a glob (`*`, `?`, `[0-3]`: the SDK's glob, as in `regions`).
struct ColorRule {
  std::string pattern;
  std::uint32_t argb = 0;
};

// Parses "RRGGBB", "#RRGGBB" or "0xRRGGBB" into 0xFFRRGGBB.
bool parse_rgb(std::string_view text, std::uint32_t* argb);
// Parses one `pattern=#RRGGBB` item; throws std::invalid_argument saying
// what is wrong with the item and what would be valid.
ColorRule parse_color_rule(std::string_view item);

// A stable, well-saturated colour from the name (FNV-1a hash to a hue).
std::uint32_t derived_color(std::string_view name);

// The colour of a region: first matching rule, else `catalog_color`
// (0xRRGGBB or 0xAARRGGBB, 0 = none), else derived_color(name).
std::uint32_t region_color(std::string_view name, std::uint32_t catalog_color,
                           const std::vector<ColorRule>& rules);

}  // namespace regiontrace::nvtx
