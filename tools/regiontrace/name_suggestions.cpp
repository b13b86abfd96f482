#include "name_suggestions.hpp"

#include <limits>
#include <string>
#include <unordered_map>

#include "record_stats.hpp"
#include "regiontrace/sdk/text_format.hpp"

namespace regiontrace::cli {
namespace {

using sdk::text::edit_distance;

std::vector<std::string> components(const std::string& name) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const auto dot = name.find('.', start);
    out.push_back(name.substr(start, dot - start));
    if (dot == std::string::npos) return out;
    start = dot + 1;
  }
}

// The option that would align module a (in A) with b (in B), when one is
// obvious: a prefix on one side, or one dot-separated part named differently.
std::string alignment_hint(const std::string& a, const std::string& b) {
  auto ends_with = [](const std::string& s, const std::string& tail) {
    return s.size() > tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0 &&
           s[s.size() - tail.size() - 1] == '.';
  };
  if (ends_with(a, b)) return "--strip-prefix A=" + a.substr(0, a.size() - b.size());
  if (ends_with(b, a)) return "--strip-prefix B=" + b.substr(0, b.size() - a.size());
  const auto pa = components(a);
  const auto pb = components(b);
  if (pa.size() != pb.size()) return {};
  std::size_t differ = pa.size();
  for (std::size_t i = 0; i < pa.size(); ++i) {
    if (pa[i] == pb[i]) continue;
    if (differ != pa.size()) return {};  // more than one part differs
    differ = i;
  }
  return differ == pa.size() ? std::string() : "--map " + pa[differ] + "=" + pb[differ];
}

}  // namespace

std::vector<NameSuggestion> closest_names(const ActivationTrace& a, const ActivationTrace& b,
                                          const NamePool& names,
                                          const std::vector<std::uint32_t>& match,
                                          const std::vector<bool>& b_matched, std::size_t top) {
  std::vector<NameSuggestion> out;
  std::vector<std::uint32_t> a_names;
  std::unordered_map<std::uint32_t, std::uint64_t> a_counts;
  for (std::uint32_t i = 0; i < a.records.size(); ++i) {
    if (match[i] != kNoMatch) continue;
    const auto m = a.records[i].module;
    if (a_counts[m]++ == 0) a_names.push_back(m);
  }
  std::vector<std::uint32_t> b_names;
  std::unordered_map<std::uint32_t, bool> b_seen;
  for (std::uint32_t j = 0; j < b.records.size(); ++j) {
    if (b_matched[j]) continue;
    const auto m = b.records[j].module;
    if (!b_seen[m]) {
      b_seen[m] = true;
      b_names.push_back(m);
    }
  }
  if (b_names.empty()) return out;
  constexpr std::size_t kMaxCandidates = 2000;  // keeps a huge mismatch quick
  if (b_names.size() > kMaxCandidates) b_names.resize(kMaxCandidates);
  const std::size_t shown = top == 0 ? a_names.size() : top;
  for (std::size_t k = 0; k < a_names.size() && k < shown; ++k) {
    const auto& name = names.name(a_names[k]);
    std::uint32_t best = b_names.front();
    std::size_t best_distance = std::numeric_limits<std::size_t>::max();
    for (auto candidate : b_names) {
      const auto d = edit_distance(name, names.name(candidate));
      if (d < best_distance) {
        best_distance = d;
        best = candidate;
      }
    }
    out.push_back({a_names[k], best, a_counts[a_names[k]], alignment_hint(name, names.name(best))});
  }
  return out;
}

}  // namespace regiontrace::cli
