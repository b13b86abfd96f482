// How `regiontrace diff` prints its report: text tables (default) or one
// JSON object (--json); docs/cli.md describes both. The comparison itself is
// activation_diff.hpp.
#pragma once

#include <cmath>
#include <ostream>
#include <string>
#include <vector>

#include "activation_diff.hpp"
#include "activation_records.hpp"

namespace regiontrace::cli {

// What a report shows: the two traces (A checked, B the reference), the
// module names they share, and the comparison's result.
struct DiffView {
  const ActivationTrace& a;
  const ActivationTrace& b;
  const NamePool& names;
  const DiffResult& result;
};

void print_diff_text(std::ostream& out, const DiffView& view);
std::string diff_json(const DiffView& view);

// The stat of a record pair furthest above its dtype noise; nullptr when the
// dtypes do not differ.
inline const ValueDiff* noisiest(const std::vector<ValueDiff>& stats) {
  const ValueDiff* best = nullptr;
  for (const auto& d : stats) {
    if (!std::isnan(d.noise_ratio) && (best == nullptr || d.noise_ratio > best->noise_ratio)) {
      best = &d;
    }
  }
  return best;
}

}  // namespace regiontrace::cli
