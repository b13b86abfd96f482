#include "json_number_repair.hpp"

#include <cctype>

namespace regiontrace::cli {
namespace {

bool is_digit(char c) {
  return std::isdigit(static_cast<unsigned char>(c)) != 0;
}

// An integer literal simdjson refuses: more digits than 64 bits hold, or as
// many digits and a larger value ("18446744073709551616").
bool beyond_64_bits(std::string_view digits, bool negative) {
  const std::string_view limit = negative ? "9223372036854775808" : "18446744073709551615";
  if (digits.size() != limit.size()) return digits.size() > limit.size();
  return digits > limit;
}

}  // namespace

std::string repair_json_numbers(std::string_view json) {
  std::string out;
  out.reserve(json.size() + 16);
  bool in_string = false;
  for (std::size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < json.size()) {
        out += json[++i];
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
      out += c;
      continue;
    }
    bool replaced = false;
    for (std::string_view token : {"-Infinity", "Infinity", "NaN"}) {
      if (json.substr(i, token.size()) == token) {
        out += '"';
        out += token;
        out += '"';
        i += token.size() - 1;
        replaced = true;
        break;
      }
    }
    if (replaced) continue;
    // A number starts after a separator; only whole integer literals are
    // candidates (a fraction or exponent makes it a double, which parses).
    const bool starts_number =
        (c == '-' || is_digit(c)) &&
        (i == 0 || !(is_digit(json[i - 1]) || json[i - 1] == '.' || json[i - 1] == 'e' ||
                     json[i - 1] == 'E' || json[i - 1] == '+' || json[i - 1] == '-'));
    if (starts_number) {
      const bool negative = c == '-';
      std::size_t end = i + (negative ? 1 : 0);
      while (end < json.size() && is_digit(json[end])) ++end;
      const std::string_view digits = json.substr(i + (negative ? 1 : 0), end - i - negative);
      const bool integer =
          end >= json.size() || (json[end] != '.' && json[end] != 'e' && json[end] != 'E');
      if (!digits.empty() && integer && beyond_64_bits(digits, negative)) {
        out += '"';
        out.append(json.substr(i, end - i));
        out += '"';
        i = end - 1;
        continue;
      }
    }
    out += c;
  }
  return out;
}

}  // namespace regiontrace::cli
