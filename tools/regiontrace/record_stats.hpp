// A record's statistics looked up by name, for the parts of the comparison
// (activation_diff.cpp, tensor_scale.cpp, pair_rules.cpp).
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "activation_records.hpp"

namespace regiontrace::cli {

// No record (alignment) or no statistic (lookup).
inline constexpr std::uint32_t kNoMatch = std::numeric_limits<std::uint32_t>::max();

// The index in t.stats of record r's statistic `name`; kNoMatch when it has none.
inline std::uint32_t find_stat(const ActivationRecord& r, std::uint32_t name,
                               const ActivationTrace& t) {
  if (name == NamePool::kMissing) return kNoMatch;
  for (std::uint32_t s = r.first_stat; s < r.first_stat + r.stat_count; ++s) {
    if (t.stats[s].name == name) return s;
  }
  return kNoMatch;
}

// Its value when a number, else NaN.
inline double stat_number(const ActivationRecord& r, std::uint32_t name, const ActivationTrace& t) {
  const auto s = find_stat(r, name, t);
  if (s == kNoMatch || t.stats[s].kind != StatKind::kNumber) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  return t.stats[s].number;
}

// A text statistic without its JSON quotes ("\"bfloat16\"" -> bfloat16).
inline std::string strip_quotes(std::string_view text) {
  if (text.size() >= 2 && text.front() == '"' && text.back() == '"') {
    text = text.substr(1, text.size() - 2);
  }
  return std::string(text);
}

}  // namespace regiontrace::cli
