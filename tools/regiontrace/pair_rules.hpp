// The tolerance each record pair of `regiontrace diff` is compared with,
// and the tally its report shows: which tolerance went to how many pairs,
// and which pairs of float dtypes differ.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "activation_diff.hpp"
#include "activation_records.hpp"

namespace regiontrace::cli {

// How a record pair is compared: its tolerance and, when the two float dtypes
// differ, the noise of the lower precision.
struct PairRule {
  Tolerance tolerance;
  double extreme_rtol = 0;
  double noise = 0;                   // 0: the dtypes do not differ
  const char* noise_dtype = nullptr;  // a string literal of the dtype table
};

class PairRules {
 public:
  PairRules(const ActivationTrace& a, const ActivationTrace& b, const NamePool& names,
            const DiffOptions& options);

  // --dtype: every pair gets this dtype's tolerance. False when unknown.
  bool force(const std::string& dtype);
  // The tolerance of a record pair: --dtype's, else the noise of the lower
  // precision when the two float dtypes differ, else the looser of the two
  // records' dtypes, else fp32's; --rtol / --atol replace either part.
  PairRule rule_for(const ActivationRecord& ra, const ActivationRecord& rb);

  std::vector<ToleranceUse>& uses() { return uses_; }
  std::vector<DtypeMismatch>& mismatches() { return mismatches_; }

 private:
  const DtypeTolerance& count_mismatch(const DtypeTolerance& da, const DtypeTolerance& db);
  std::optional<DtypeTolerance> record_dtype(const ActivationRecord& r,
                                             const ActivationTrace& t) const;

  const ActivationTrace& a_;
  const ActivationTrace& b_;
  const DiffOptions& options_;
  std::uint32_t dtype_;
  std::optional<DtypeTolerance> forced_;
  std::vector<ToleranceUse> uses_;
  std::vector<DtypeMismatch> mismatches_;
};

}  // namespace regiontrace::cli
