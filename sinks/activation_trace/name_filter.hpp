// A regex with search semantics over names that repeat (module paths, op
// names), remembering each name's answer: a regex search costs hundreds of
// nanoseconds, a lookup tens.
//
// The engine is RE2: patterns come from users (profiles, FASTVIDEO_TRACE_LAYERS),
// and RE2 matches in time linear in the name with memory bounded at compile
// time, where std::regex recursed until the stack overflowed on a 100 KB
// pattern and took minutes on `.*.*...x`. Its syntax is Python `re`'s
// (what FastVideo's Python side uses) without backreferences and lookaround,
// which are refused at start with a message.
#pragma once

#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace re2 {
class RE2;
}

namespace regiontrace::activation {

class NameFilter {
 public:
  // Empty pattern: everything passes. Throws std::invalid_argument naming
  // `key`, the pattern (shortened when long) and what is wrong with it.
  NameFilter(const std::string& key, const std::string& pattern);
  ~NameFilter();

  bool everything() const { return everything_; }
  // True when the pattern is found in `name` or in `alternative`; the
  // answer is remembered under `name`.
  bool matches(std::string_view name, std::string_view alternative = {});

  // Why `pattern` cannot be used, or empty when it can: what start-up and
  // `regiontrace check` report.
  static std::string problem(const std::string& pattern);

 private:
  bool everything_ = true;
  std::unique_ptr<re2::RE2> regex_;
  std::mutex mutex_;
  std::deque<std::string> names_;  // owns the keys of seen_ (deque: no moves)
  std::unordered_map<std::string_view, bool> seen_;
};

}  // namespace regiontrace::activation
