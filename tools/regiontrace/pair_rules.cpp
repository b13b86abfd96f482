#include "pair_rules.hpp"

#include <algorithm>
#include <string_view>

#include "record_stats.hpp"

namespace regiontrace::cli {
namespace {

// The lower precision of two float dtypes.
const DtypeTolerance& lower(const DtypeTolerance& da, const DtypeTolerance& db) {
  return da.noise >= db.noise ? da : db;
}

}  // namespace

PairRules::PairRules(const ActivationTrace& a, const ActivationTrace& b, const NamePool& names,
                     const DiffOptions& options)
    : a_(a), b_(b), options_(options), dtype_(names.find("dtype")) {}

bool PairRules::force(const std::string& dtype) {
  forced_ = tolerance_for_dtype(dtype);
  return forced_.has_value();
}

PairRule PairRules::rule_for(const ActivationRecord& ra, const ActivationRecord& rb) {
  std::string label;
  Tolerance tol;
  PairRule rule;
  const auto da = record_dtype(ra, a_);
  const auto db = record_dtype(rb, b_);
  const bool mixed =
      da && db && da->noise > 0 && db->noise > 0 && std::string_view(da->name) != db->name;
  if (mixed) {
    const auto& low = count_mismatch(*da, *db);
    rule.noise = low.noise;
    rule.noise_dtype = low.short_name;
  }
  double extreme_rtol = -1;
  if (forced_) {
    label = forced_->name;
    tol = forced_->tolerance;
  } else {
    if (mixed) {
      const double noise = rule.noise;
      label = std::string(da->name) + " vs " + db->name;
      tol = {kNoiseTolerance * noise, std::max(da->tolerance.atol, db->tolerance.atol)};
      extreme_rtol = 2 * kNoiseTolerance * noise;
    } else if (!da && !db) {
      const auto fallback = default_dtype_tolerance();
      label = std::string(fallback.name) + " (no dtype in the records)";
      tol = fallback.tolerance;
    } else if (da && db && std::string_view(da->name) != db->name) {
      label = std::string(da->name) + " vs " + db->name;
      tol = {std::max(da->tolerance.rtol, db->tolerance.rtol),
             std::max(da->tolerance.atol, db->tolerance.atol)};
    } else {
      const auto& d = da ? *da : *db;
      label = d.name;
      tol = d.tolerance;
    }
  }
  if (extreme_rtol < 0 || options_.rtol) extreme_rtol = options_.rtol.value_or(tol.rtol);
  if (options_.rtol) tol.rtol = *options_.rtol;
  if (options_.atol) tol.atol = *options_.atol;
  auto it = std::find_if(uses_.begin(), uses_.end(),
                         [&](const ToleranceUse& u) { return u.dtype == label; });
  if (it == uses_.end()) {
    uses_.push_back({label, tol, extreme_rtol, 0});
    it = uses_.end() - 1;
  }
  ++it->records;
  rule.tolerance = tol;
  rule.extreme_rtol = extreme_rtol;
  return rule;
}

// Counts a pair of differing float dtypes; returns the lower precision.
const DtypeTolerance& PairRules::count_mismatch(const DtypeTolerance& da,
                                                const DtypeTolerance& db) {
  auto& list = mismatches_;
  auto it = std::find_if(list.begin(), list.end(),
                         [&](const DtypeMismatch& m) { return m.a == da.name && m.b == db.name; });
  if (it == list.end()) {
    const auto& low = lower(da, db);
    list.push_back({da.name, db.name, low.short_name, low.noise, 0});
    it = list.end() - 1;
  }
  ++it->records;
  return lower(da, db);
}

std::optional<DtypeTolerance> PairRules::record_dtype(const ActivationRecord& r,
                                                      const ActivationTrace& t) const {
  const auto s = find_stat(r, dtype_, t);
  if (s == kNoMatch || t.stats[s].kind != StatKind::kText) return std::nullopt;
  return tolerance_for_dtype(strip_quotes(t.text(t.stats[s])));
}

}  // namespace regiontrace::cli
