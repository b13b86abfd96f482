#include "activation_diff.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace regiontrace::cli {
namespace {

constexpr std::uint32_t kNoMatch = std::numeric_limits<std::uint32_t>::max();
constexpr double kInfinity = std::numeric_limits<double>::infinity();

// A record's alignment key, packed so sorting a million of them is quick.
struct AlignKey {
  std::uint64_t names;  // module << 32 | tensor
  std::int64_t step;
  std::uint32_t occurrence;
  std::uint32_t index;

  bool same_record(const AlignKey& o) const {
    return names == o.names && step == o.step && occurrence == o.occurrence;
  }
  bool operator<(const AlignKey& o) const {
    if (names != o.names) return names < o.names;
    if (step != o.step) return step < o.step;
    return occurrence < o.occurrence;
  }
};

std::vector<AlignKey> sorted_keys(const ActivationTrace& t) {
  std::vector<AlignKey> keys(t.records.size());
  for (std::uint32_t i = 0; i < t.records.size(); ++i) {
    const auto& r = t.records[i];
    keys[i] = {(std::uint64_t{r.module} << 32) | r.tensor, r.step, r.occurrence, i};
  }
  std::sort(keys.begin(), keys.end());
  return keys;
}

// For each record of A, the index of the record of B with the same key.
std::vector<std::uint32_t> align(const ActivationTrace& a, const ActivationTrace& b,
                                 std::vector<bool>& b_matched) {
  const auto keys_a = sorted_keys(a);
  const auto keys_b = sorted_keys(b);
  std::vector<std::uint32_t> match(a.records.size(), kNoMatch);
  b_matched.assign(b.records.size(), false);
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < keys_a.size() && j < keys_b.size()) {
    if (keys_a[i].same_record(keys_b[j])) {
      match[keys_a[i].index] = keys_b[j].index;
      b_matched[keys_b[j].index] = true;
      ++i;
      ++j;
    } else if (keys_a[i] < keys_b[j]) {
      ++i;
    } else {
      ++j;
    }
  }
  return match;
}

double relative_error(double x, double y) {
  if (x == y || (std::isnan(x) && std::isnan(y))) return 0;
  if (!std::isfinite(x) || !std::isfinite(y)) return kInfinity;
  return std::fabs(x - y) / std::max(std::fabs(x), std::fabs(y));
}

bool numbers_match(double x, double y, bool exact, const Tolerance& tol) {
  if (x == y || (std::isnan(x) && std::isnan(y))) return true;
  if (exact || !std::isfinite(x) || !std::isfinite(y)) return false;
  return std::fabs(x - y) <= tol.atol + tol.rtol * std::max(std::fabs(x), std::fabs(y));
}

bool worse(const ValueDiff& x, const ValueDiff& y) {
  if (x.rel_error != y.rel_error) return x.rel_error > y.rel_error;
  const double ax = std::isnan(x.abs_error) ? kInfinity : x.abs_error;
  const double ay = std::isnan(y.abs_error) ? kInfinity : y.abs_error;
  if (ax != ay) return ax > ay;
  return x.a_record < y.a_record;  // earlier in A's execution first
}

class Comparer {
 public:
  Comparer(const ActivationTrace& a, const ActivationTrace& b, const NamePool& names,
           const DiffOptions& options)
      : a_(a),
        b_(b),
        names_(names),
        options_(options),
        selected_(names.size(), options.stats.empty()),
        exact_(names.size(), false),
        totals_(names.size()) {
    std::vector<bool> present(names.size(), false);
    for (const auto* t : {&a, &b}) {
      for (const auto& s : t->stats) present[s.name] = true;
    }
    for (const auto& stat : options.stats) {
      const auto id = names.find(stat);
      if (id == NamePool::kMissing || !present[id]) {
        throw std::invalid_argument("--stats: no record in either file has a statistic named '" +
                                    stat + "'");
      }
      selected_[id] = true;
    }
    for (const char* stat : kExactStats) {
      const auto id = names.find(stat);
      if (id != NamePool::kMissing) exact_[id] = true;
    }
    for (std::uint32_t id = 0; id < names.size(); ++id) {
      totals_[id].name = id;
      totals_[id].exact = exact_[id];
    }
    used_.assign(names.size(), false);
    for (std::uint32_t id = 0; id < names.size(); ++id) used_[id] = present[id] && selected_[id];
  }

  DiffResult run() {
    std::vector<bool> b_matched;
    const auto match = align(a_, b_, b_matched);
    for (std::uint32_t i = 0; i < a_.records.size(); ++i) {
      if (match[i] == kNoMatch) {
        ++result_.only_in_a_count;
        if (keep(result_.only_in_a.size())) result_.only_in_a.push_back(i);
        continue;
      }
      ++result_.matched_records;
      compare_records(i, match[i]);
    }
    for (std::uint32_t j = 0; j < b_.records.size(); ++j) {
      if (b_matched[j]) continue;
      ++result_.only_in_b_count;
      if (keep(result_.only_in_b.size())) result_.only_in_b.push_back(j);
    }
    std::sort(worst_.begin(), worst_.end(), worse);
    result_.worst = std::move(worst_);
    for (const auto& t : totals_) {
      if (used_[t.name]) result_.stats.push_back(t);
    }
    std::sort(result_.stats.begin(), result_.stats.end(), [&](const auto& x, const auto& y) {
      return names_.name(x.name) < names_.name(y.name);
    });
    return std::move(result_);
  }

 private:
  bool keep(std::size_t kept) const { return options_.top == 0 || kept < options_.top; }

  void compare_records(std::uint32_t ia, std::uint32_t ib) {
    const auto& ra = a_.records[ia];
    const auto& rb = b_.records[ib];
    record_diffs_.clear();
    std::uint32_t b_found = 0;
    for (std::uint32_t sa = ra.first_stat; sa < ra.first_stat + ra.stat_count; ++sa) {
      const StatValue& va = a_.stats[sa];
      if (!selected_[va.name]) continue;
      const std::uint32_t sb = find_stat(rb, va.name);
      if (sb == kNoMatch) {
        ++totals_[va.name].only_in_a;
        continue;
      }
      ++b_found;
      compare_values(ia, ib, sa, sb);
    }
    for (std::uint32_t sb = rb.first_stat; sb < rb.first_stat + rb.stat_count; ++sb) {
      const auto name = b_.stats[sb].name;
      if (selected_[name] && find_stat(ra, name, a_) == kNoMatch) ++totals_[name].only_in_b;
    }
    if (record_diffs_.empty()) return;
    ++result_.divergent_records;
    if (!result_.first_divergent_record) {
      result_.first_divergent_record = ia;
      result_.first_divergence = record_diffs_;
    }
  }

  std::uint32_t find_stat(const ActivationRecord& r, std::uint32_t name) const {
    return find_stat(r, name, b_);
  }
  static std::uint32_t find_stat(const ActivationRecord& r, std::uint32_t name,
                                 const ActivationTrace& t) {
    for (std::uint32_t s = r.first_stat; s < r.first_stat + r.stat_count; ++s) {
      if (t.stats[s].name == name) return s;
    }
    return kNoMatch;
  }

  void compare_values(std::uint32_t ia, std::uint32_t ib, std::uint32_t sa, std::uint32_t sb) {
    const StatValue& va = a_.stats[sa];
    const StatValue& vb = b_.stats[sb];
    StatTotals& totals = totals_[va.name];
    if (va.kind == StatKind::kError && vb.kind == StatKind::kError) {
      ++totals.failed_both;
      return;
    }
    ++totals.compared;
    ++result_.values_compared;
    ValueDiff diff{ia, ib, sa, sb, std::numeric_limits<double>::quiet_NaN(), kInfinity};
    bool same = false;
    if (va.kind != vb.kind) {
      same = false;
    } else if (va.kind == StatKind::kNumber) {
      same = numbers_match(va.number, vb.number, exact_[va.name], options_.tolerance);
      diff.abs_error = std::fabs(va.number - vb.number);
      diff.rel_error = relative_error(va.number, vb.number);
    } else if (va.kind == StatKind::kNull) {
      same = true;
    } else {
      same = a_.text(va) == b_.text(vb);
    }
    if (same) return;
    ++totals.divergent;
    ++result_.divergent_values;
    totals.max_rel_error = std::max(totals.max_rel_error, diff.rel_error);
    record_diffs_.push_back(diff);
    remember_worst(diff);
  }

  // Keeps the `top` worst values in a heap whose front is the least bad kept.
  void remember_worst(const ValueDiff& diff) {
    if (options_.top == 0) {
      worst_.push_back(diff);
      return;
    }
    if (worst_.size() < options_.top) {
      worst_.push_back(diff);
      std::push_heap(worst_.begin(), worst_.end(), worse);
    } else if (worse(diff, worst_.front())) {
      std::pop_heap(worst_.begin(), worst_.end(), worse);
      worst_.back() = diff;
      std::push_heap(worst_.begin(), worst_.end(), worse);
    }
  }

  const ActivationTrace& a_;
  const ActivationTrace& b_;
  const NamePool& names_;
  const DiffOptions& options_;
  std::vector<bool> selected_;
  std::vector<bool> exact_;
  std::vector<bool> used_;
  std::vector<StatTotals> totals_;
  std::vector<ValueDiff> record_diffs_;
  std::vector<ValueDiff> worst_;
  DiffResult result_;
};

}  // namespace

DiffResult diff_traces(const ActivationTrace& a, const ActivationTrace& b, const NamePool& names,
                       const DiffOptions& options) {
  return Comparer(a, b, names, options).run();
}

}  // namespace regiontrace::cli
