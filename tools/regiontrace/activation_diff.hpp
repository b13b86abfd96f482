// Compares two activation traces record by record: what `regiontrace diff`
// computes, apart from how it is printed.
//
// Records are aligned by (module, tensor, step, occurrence), so file order and
// number formatting do not matter. Every statistic present in both records is
// compared; numbers with a tolerance, the exact statistics (kExactStats) and
// all non-numeric values (strings, arrays) for identity.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "activation_records.hpp"

namespace regiontrace::cli {

// Numbers a and b match when |a - b| <= atol + rtol * max(|a|, |b|): symmetric,
// so `diff A B` and `diff B A` agree. The defaults are torch.testing's
// tolerances for bfloat16 (rtol 1.6e-2 = two bf16 ulps, atol 1e-5).
struct Tolerance {
  double rtol = 1.6e-2;
  double atol = 1e-5;
};

// Compared exactly even when numeric: identity of layout, type and bytes, and
// counts where one more NaN or Inf is a real difference.
inline const char* const kExactStats[] = {"shape", "dtype",     "device",   "hash",
                                          "numel", "nan_count", "inf_count"};

struct DiffOptions {
  Tolerance tolerance;
  std::vector<std::string> stats;  // empty: every statistic
  std::size_t top = 10;            // worst values and one-side records kept; 0 = all
};

// One statistic of one aligned record pair that differs.
struct ValueDiff {
  std::uint32_t a_record = 0;  // indices into ActivationTrace::records
  std::uint32_t b_record = 0;
  std::uint32_t a_stat = 0;  // indices into ActivationTrace::stats
  std::uint32_t b_stat = 0;
  double abs_error = 0;  // NaN when not both numbers
  double rel_error = 0;  // |a-b| / max(|a|,|b|); infinite for mismatched kinds or texts
};

struct StatTotals {
  std::uint32_t name = 0;
  bool exact = false;
  std::uint64_t compared = 0;
  std::uint64_t divergent = 0;
  std::uint64_t only_in_a = 0;  // aligned records where only one side has this stat
  std::uint64_t only_in_b = 0;
  std::uint64_t failed_both = 0;  // "<error: ...>" on both sides: nothing to compare
  double max_rel_error = 0;
};

struct DiffResult {
  std::uint64_t matched_records = 0;
  std::uint64_t divergent_records = 0;
  std::uint64_t values_compared = 0;
  std::uint64_t divergent_values = 0;
  // The first divergent record in A's execution order, with all its divergent stats.
  std::optional<std::uint32_t> first_divergent_record;
  std::vector<ValueDiff> first_divergence;
  std::vector<ValueDiff> worst;  // worst first, at most options.top
  std::uint64_t only_in_a_count = 0;
  std::uint64_t only_in_b_count = 0;
  std::vector<std::uint32_t> only_in_a;  // record indices in execution order, at most top
  std::vector<std::uint32_t> only_in_b;
  std::vector<StatTotals> stats;  // sorted by name

  bool equal() const {
    return divergent_values == 0 && only_in_a_count == 0 && only_in_b_count == 0;
  }
};

// Throws std::invalid_argument when options.stats names a statistic that is
// in neither file.
DiffResult diff_traces(const ActivationTrace& a, const ActivationTrace& b, const NamePool& names,
                       const DiffOptions& options);

}  // namespace regiontrace::cli
