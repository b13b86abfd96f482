#include "region_colors.hpp"

#include <cmath>
#include <stdexcept>

#include "regiontrace/sdk/color.hpp"
#include "regiontrace/sdk/glob.hpp"

namespace regiontrace::nvtx {

bool parse_rgb(std::string_view text, std::uint32_t* argb) {
  std::uint32_t rgb = 0;
  if (!regiontrace::parse_rgb(text, &rgb)) return false;
  *argb = 0xFF000000u | rgb;
  return true;
}

ColorRule parse_color_rule(std::string_view item) {
  const std::size_t eq = item.rfind('=');
  const std::string shown(item);
  if (eq == std::string_view::npos || eq == 0) {
    throw std::invalid_argument(
        "`" + shown +
        "` is not `region=#RRGGBB` (a region name or glob, then a "
        "colour, e.g. `inference_denoising=#C44E52` or `blocks.*=#8172B2`)");
  }
  ColorRule rule;
  rule.pattern = std::string(item.substr(0, eq));
  if (!parse_rgb(item.substr(eq + 1), &rule.argb)) {
    throw std::invalid_argument("`" + shown + "`: `" + std::string(item.substr(eq + 1)) +
                                "` is not a colour (valid: #RRGGBB, RRGGBB or 0xRRGGBB)");
  }
  return rule;
}

std::uint32_t derived_color(std::string_view name) {
  std::uint32_t h = 2166136261u;
  for (char c : name) {
    h ^= static_cast<unsigned char>(c);
    h *= 16777619u;
  }
  // Hue from the hash; saturation and value fixed so every colour reads well
  // on Nsight's dark and light themes.
  const double hue = static_cast<double>(h % 360u) / 60.0;
  const double s = 0.6, v = 0.85;
  const double c = v * s;
  const double x = c * (1.0 - std::fabs(std::fmod(hue, 2.0) - 1.0));
  double r = 0, g = 0, b = 0;
  switch (static_cast<int>(hue)) {
    case 0:
      r = c, g = x;
      break;
    case 1:
      r = x, g = c;
      break;
    case 2:
      g = c, b = x;
      break;
    case 3:
      g = x, b = c;
      break;
    case 4:
      r = x, b = c;
      break;
    default:
      r = c, b = x;
      break;
  }
  const double m = v - c;
  auto byte = [m](double f) { return static_cast<std::uint32_t>(std::lround((f + m) * 255.0)); };
  return 0xFF000000u | (byte(r) << 16) | (byte(g) << 8) | byte(b);
}

std::uint32_t region_color(std::string_view name, std::uint32_t catalog_color,
                           const std::vector<ColorRule>& rules) {
  for (const ColorRule& rule : rules) {
    if (sdk::glob_match(rule.pattern, name)) return rule.argb;
  }
  if (catalog_color != 0) {
    // The registry stores 0xRRGGBB; an explicit alpha is kept.
    return (catalog_color >> 24) == 0 ? (0xFF000000u | catalog_color) : catalog_color;
  }
  return derived_color(name);
}

}  // namespace regiontrace::nvtx
