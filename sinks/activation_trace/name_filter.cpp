#include "name_filter.hpp"

#include <re2/re2.h>

#include <stdexcept>

namespace regiontrace::activation {
namespace {

// Compiled programs above this are refused: a pattern that needs more is a
// mistake (or an attack), never a module filter.
constexpr std::int64_t kMaxProgramBytes = 8 << 20;

std::unique_ptr<re2::RE2> compile(const std::string& pattern) {
  re2::RE2::Options options;
  options.set_log_errors(false);  // the error goes into our message instead
  options.set_max_mem(kMaxProgramBytes);
  return std::make_unique<re2::RE2>(pattern, options);
}

std::string shortened(const std::string& pattern) {
  constexpr std::size_t kShown = 80;
  if (pattern.size() <= kShown) return pattern;
  return pattern.substr(0, kShown) + "...` (" + std::to_string(pattern.size()) + " characters";
}

std::string explain(const re2::RE2& regex) {
  std::string why = regex.error();
  switch (regex.error_code()) {
    case re2::RE2::ErrorBadEscape:
    case re2::RE2::ErrorBadPerlOp:
    case re2::RE2::ErrorRepeatArgument:
      if (regex.pattern().find("(?=") != std::string::npos ||
          regex.pattern().find("(?!") != std::string::npos ||
          regex.pattern().find("(?<") != std::string::npos ||
          regex.error_code() == re2::RE2::ErrorBadEscape) {
        why +=
            "; backreferences and lookaround are not supported (RE2 syntax: Python re "
            "without them)";
      }
      break;
    case re2::RE2::ErrorPatternTooLarge:
      why +=
          "; the compiled pattern would exceed " + std::to_string(kMaxProgramBytes >> 20) + " MiB";
      break;
    default:
      break;
  }
  return why;
}

}  // namespace

std::string NameFilter::problem(const std::string& pattern) {
  if (pattern.empty()) return {};
  const std::unique_ptr<re2::RE2> regex = compile(pattern);
  return regex->ok() ? std::string() : explain(*regex);
}

NameFilter::NameFilter(const std::string& key, const std::string& pattern)
    : everything_(pattern.empty()) {
  if (everything_) return;
  regex_ = compile(pattern);
  if (!regex_->ok()) {
    const std::string shown = shortened(pattern);
    throw std::invalid_argument(key + ": `" + shown + (shown.size() == pattern.size() ? "`" : ")") +
                                " is not a usable regular expression: " + explain(*regex_));
  }
}

NameFilter::~NameFilter() = default;

bool NameFilter::matches(std::string_view name, std::string_view alternative) {
  if (everything_) return true;
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = seen_.find(name);
  if (it != seen_.end()) return it->second;
  const bool hit =
      re2::RE2::PartialMatch(re2::StringPiece(name.data(), name.size()), *regex_) ||
      (!alternative.empty() &&
       re2::RE2::PartialMatch(re2::StringPiece(alternative.data(), alternative.size()), *regex_));
  names_.emplace_back(name);
  seen_.emplace(names_.back(), hit);
  return hit;
}

}  // namespace regiontrace::activation
