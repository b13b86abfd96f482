// Colours as catalogs, profiles and sinks spell them: "#RRGGBB", "0xRRGGBB"
// or "RRGGBB".
#pragma once

#include <cstdint>
#include <string_view>

namespace regiontrace {

// Parses the colour into 0xRRGGBB; false when `text` is none of the forms.
inline bool parse_rgb(std::string_view text, std::uint32_t* rgb) {
  if (!text.empty() && text.front() == '#') {
    text.remove_prefix(1);
  } else if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    text.remove_prefix(2);
  }
  if (text.size() != 6) return false;
  std::uint32_t v = 0;
  for (char c : text) {
    const int d = (c >= '0' && c <= '9')   ? c - '0'
                  : (c >= 'a' && c <= 'f') ? c - 'a' + 10
                  : (c >= 'A' && c <= 'F') ? c - 'A' + 10
                                           : -1;
    if (d < 0) return false;
    v = v * 16 + static_cast<std::uint32_t>(d);
  }
  *rgb = v;
  return true;
}

}  // namespace regiontrace
