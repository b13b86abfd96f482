// Comma-separated option values ("--stats abs_mean,sum"), read as one string
// so that a list option never takes the positional arguments after it.
#pragma once

#include <string>
#include <vector>

namespace regiontrace::cli {

// Splits on commas, trimming spaces and dropping empty items.
inline std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    const std::size_t first = text.find_first_not_of(' ', start);
    if (first != std::string::npos && first < end) {
      const std::size_t last = text.find_last_not_of(' ', end - 1);
      items.push_back(text.substr(first, last - first + 1));
    }
    start = end + 1;
  }
  return items;
}

}  // namespace regiontrace::cli
