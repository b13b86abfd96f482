// A regex with search semantics over names that repeat (module paths, op
// names), remembering each name's answer: std::regex costs microseconds,
// a lookup tens of nanoseconds.
#pragma once

#include <deque>
#include <mutex>
#include <regex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace regiontrace::activation {

class NameFilter {
 public:
  // Empty pattern: everything passes. Throws std::invalid_argument naming
  // `key` and the pattern when it is not a valid ECMAScript regex.
  NameFilter(const std::string& key, const std::string& pattern);

  bool everything() const { return everything_; }
  // True when the pattern is found in `name` or in `alternative`; the
  // answer is remembered under `name`.
  bool matches(std::string_view name, std::string_view alternative = {});

 private:
  bool everything_ = true;
  std::regex regex_;
  std::mutex mutex_;
  std::deque<std::string> names_;  // owns the keys of seen_ (deque: no moves)
  std::unordered_map<std::string_view, bool> seen_;
};

}  // namespace regiontrace::activation
