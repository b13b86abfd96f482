#include "dom_fields.hpp"

#include <cmath>
#include <limits>

namespace regiontrace::cli {

using simdjson::dom::element_type;

std::optional<std::string_view> string_field(simdjson::dom::object object, std::string_view key) {
  std::string_view value;
  if (object[key].get_string().get(value)) return std::nullopt;
  return value;
}

std::optional<std::int64_t> integer_field(simdjson::dom::object object, std::string_view key) {
  simdjson::dom::element value;
  if (object[key].get(value)) return std::nullopt;
  switch (value.type()) {
    case element_type::INT64:
      return int64_t(value);
    case element_type::UINT64: {
      const std::uint64_t u = value;
      if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
        return std::nullopt;
      return static_cast<std::int64_t>(u);
    }
    case element_type::DOUBLE: {
      // Whole numbers in int64's range only: converting one outside it is undefined.
      const double d = value;
      if (std::floor(d) != d || !(d >= -0x1p63 && d < 0x1p63)) return std::nullopt;
      return static_cast<std::int64_t>(d);
    }
    default:
      return std::nullopt;
  }
}

}  // namespace regiontrace::cli
