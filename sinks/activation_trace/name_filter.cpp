#include "name_filter.hpp"

#include <stdexcept>

namespace regiontrace::activation {

NameFilter::NameFilter(const std::string& key, const std::string& pattern)
    : everything_(pattern.empty()) {
  if (everything_) return;
  try {
    regex_ = std::regex(pattern, std::regex::ECMAScript | std::regex::optimize);
  } catch (const std::regex_error& e) {
    throw std::invalid_argument(key + ": `" + pattern + "` is not a valid regular expression (" +
                                e.what() + ")");
  }
}

bool NameFilter::matches(std::string_view name, std::string_view alternative) {
  if (everything_) return true;
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = seen_.find(name);
  if (it != seen_.end()) return it->second;
  const bool hit =
      std::regex_search(name.begin(), name.end(), regex_) ||
      (!alternative.empty() && std::regex_search(alternative.begin(), alternative.end(), regex_));
  names_.emplace_back(name);
  seen_.emplace(names_.back(), hit);
  return hit;
}

}  // namespace regiontrace::activation
