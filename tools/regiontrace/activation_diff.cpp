#include "activation_diff.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <unordered_map>

#include "name_suggestions.hpp"
#include "pair_rules.hpp"
#include "record_stats.hpp"
#include "tensor_scale.hpp"

namespace regiontrace::cli {
namespace {

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

bool worse(const ValueDiff& x, const ValueDiff& y) {
  if (x.rel_error != y.rel_error) return x.rel_error > y.rel_error;
  const double ax = std::isnan(x.abs_error) ? kInfinity : x.abs_error;
  const double ay = std::isnan(y.abs_error) ? kInfinity : y.abs_error;
  if (ax != ay) return ax > ay;
  return x.a_record < y.a_record;  // earlier in A's execution first
}

}  // namespace

std::string NameRules::apply(const std::string& module, bool side_a) const {
  std::string name = module;
  for (const auto& prefix : side_a ? strip_a : strip_b) {
    if (!prefix.empty() && name.size() > prefix.size() &&
        name.compare(0, prefix.size(), prefix) == 0) {
      name.erase(0, prefix.size());
      break;
    }
  }
  for (const auto& [from, to] : maps) {
    if (from.empty()) continue;
    std::size_t pos = 0;
    while ((pos = name.find(from, pos)) != std::string::npos) {
      const std::size_t end = pos + from.size();
      const bool bounded =
          (pos == 0 || name[pos - 1] == '.') && (end == name.size() || name[end] == '.');
      if (!bounded) {
        ++pos;
        continue;
      }
      name.replace(pos, from.size(), to);
      pos += to.size();
    }
  }
  return name;
}

std::optional<DtypeTolerance> tolerance_for_dtype(std::string_view dtype) {
  if (dtype.rfind("torch.", 0) == 0) dtype.remove_prefix(6);
  // rtol: torch.testing's for bf16, fp16 and fp64. For fp32 ten times its
  // 1.3e-6: a port's statistics carry the rounding of every layer before,
  // reordered (another matmul blocking, a fused kernel), not of one op, and
  // 1e-5 still sits 100x below the smallest perturbation worth finding.
  struct Entry {
    const char* names[4];
    DtypeTolerance tolerance;
  };
  // noise: the unit roundoff where storing the output rounds more than the
  // arithmetic before it (16-bit floats, which accumulate in fp32); for fp32
  // and fp64 the arithmetic's reordered rounding, half their rtol.
  static const Entry kTable[] = {
      {{"float32", "fp32", "float", "f32"}, {"float32", "fp32", {1e-5, 1e-6}, 5e-6}},
      {{"bfloat16", "bf16", nullptr, nullptr},
       {"bfloat16", "bf16", {1.6e-2, 1e-5}, std::ldexp(1.0, -8)}},
      {{"float16", "fp16", "half", "f16"}, {"float16", "fp16", {1e-3, 1e-5}, std::ldexp(1.0, -11)}},
      {{"float64", "fp64", "double", "f64"}, {"float64", "fp64", {1e-7, 1e-7}, 5e-8}},
  };
  for (const auto& e : kTable) {
    for (const char* name : e.names) {
      if (name != nullptr && dtype == name) return e.tolerance;
    }
  }
  // Integer and bool tensors: statistics are sums of exact values in double.
  static const char* const kIntegers[] = {"int8", "int16", "int32", "int64", "uint8", "bool"};
  for (const char* name : kIntegers) {
    if (dtype == name) return DtypeTolerance{name, name, {1e-7, 1e-7}};
  }
  return std::nullopt;
}

DtypeTolerance default_dtype_tolerance() {
  return *tolerance_for_dtype("float32");
}

const char* noise_verdict(double ratio) {
  if (!(ratio > 1)) return "below resolution";
  return ratio <= kNoiseTolerance ? "within noise" : "above noise";
}

namespace {

// Where a record sits in the order the first divergence is looked for.
struct OrderKey {
  std::int64_t step;
  std::uint32_t position;
  bool operator<(const OrderKey& o) const {
    return step != o.step ? step < o.step : position < o.position;
  }
};

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
        scaled_(names.size(), false),
        extreme_(names.size(), false),
        totals_(names.size()),
        scales_(a, b, names),
        rules_(a, b, names, options) {
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
    if (options.dtype) {
      if (!rules_.force(*options.dtype)) {
        throw std::invalid_argument("--dtype: unknown dtype '" + *options.dtype +
                                    "' (float32, bfloat16, float16, float64, or torch.<dtype>)");
      }
    }
    for (const char* stat : kExactStats) {
      const auto id = names.find(stat);
      if (id != NamePool::kMissing) exact_[id] = true;
    }
    for (const char* stat : kScaledStats) {
      const auto id = names.find(stat);
      if (id != NamePool::kMissing) scaled_[id] = true;
    }
    for (const char* stat : kExtremeStats) {
      const auto id = names.find(stat);
      if (id != NamePool::kMissing) extreme_[id] = true;
    }
    for (std::uint32_t id = 0; id < names.size(); ++id) {
      totals_[id].name = id;
      totals_[id].exact = exact_[id];
    }
    used_.assign(names.size(), false);
    for (std::uint32_t id = 0; id < names.size(); ++id) used_[id] = present[id] && selected_[id];
    sum_ = names.find("sum");
    dtype_ = names.find("dtype");
    hash_ = names.find("hash");
  }

  DiffResult run() {
    std::vector<bool> b_matched;
    const auto match = align(a_, b_, b_matched);
    std::uint64_t matched = 0;
    for (auto m : match) matched += m != kNoMatch;
    const auto smaller = std::min(a_.records.size(), b_.records.size());
    result_.names_mismatch = smaller > 0 && matched * 2 < smaller;
    const auto order = order_keys(match);
    for (std::uint32_t i = 0; i < a_.records.size(); ++i) {
      if (match[i] == kNoMatch) {
        ++result_.only_in_a_count;
        if (keep(result_.only_in_a.size())) result_.only_in_a.push_back(i);
        continue;
      }
      ++result_.matched_records;
      // Too few pairs to trust: what they say is not reported as a divergence.
      if (!result_.names_mismatch) compare_records(i, match[i], order[i]);
    }
    for (std::uint32_t j = 0; j < b_.records.size(); ++j) {
      if (b_matched[j]) continue;
      ++result_.only_in_b_count;
      if (keep(result_.only_in_b.size())) result_.only_in_b.push_back(j);
    }
    if (result_.names_mismatch) {
      result_.closest_names = closest_names(a_, b_, names_, match, b_matched, options_.top);
    }
    std::sort(earliest_.begin(), earliest_.end(),
              [](const auto& x, const auto& y) { return x.first < y.first; });
    for (auto& [key, record] : earliest_) {
      if (!result_.first_divergent_record) {
        result_.first_divergent_record = record.a_record;
        result_.first_divergence = std::move(record.stats);
      } else {
        result_.next_divergences.push_back(std::move(record));
      }
    }
    std::sort(worst_.begin(), worst_.end(), worse);
    result_.worst = std::move(worst_);
    for (const auto& t : totals_) {
      if (used_[t.name]) result_.stats.push_back(t);
    }
    std::sort(result_.stats.begin(), result_.stats.end(), [&](const auto& x, const auto& y) {
      return names_.name(x.name) < names_.name(y.name);
    });
    result_.tolerances = std::move(rules_.uses());
    result_.dtype_mismatches = std::move(rules_.mismatches());
    return std::move(result_);
  }

 private:
  bool keep(std::size_t kept) const { return options_.top == 0 || kept < options_.top; }

  // (step, execution position) of every matched record of A. Execution order
  // is A's own unless only B knows it (seq numbers); a record without a step
  // takes the step of the last record before it that has one.
  std::vector<OrderKey> order_keys(const std::vector<std::uint32_t>& match) const {
    std::vector<OrderKey> keys(a_.records.size(), OrderKey{0, 0});
    auto effective_steps = [](const ActivationTrace& t) {
      std::vector<std::int64_t> steps(t.records.size());
      std::int64_t last = kNoStep;
      for (std::size_t i = 0; i < t.records.size(); ++i) {
        if (t.records[i].step != kNoStep) last = t.records[i].step;
        steps[i] = last;
      }
      return steps;
    };
    if (!a_.ordered_by_seq && b_.ordered_by_seq) {
      const auto steps = effective_steps(b_);
      for (std::uint32_t i = 0; i < keys.size(); ++i) {
        if (match[i] != kNoMatch) keys[i] = {steps[match[i]], match[i]};
      }
    } else {
      const auto steps = effective_steps(a_);
      for (std::uint32_t i = 0; i < keys.size(); ++i) keys[i] = {steps[i], i};
    }
    return keys;
  }

  void compare_records(std::uint32_t ia, std::uint32_t ib, OrderKey key) {
    const auto& ra = a_.records[ia];
    const auto& rb = b_.records[ib];
    record_diffs_.clear();
    const PairRule rule = rules_.rule_for(ra, rb);
    const TensorScale scale = scales_.of_pair(ra, rb);
    for (std::uint32_t sa = ra.first_stat; sa < ra.first_stat + ra.stat_count; ++sa) {
      const StatValue& va = a_.stats[sa];
      if (!selected_[va.name]) continue;
      const std::uint32_t sb = find_stat(rb, va.name, b_);
      if (sb == kNoMatch) {
        ++totals_[va.name].only_in_a;
        continue;
      }
      if (rule.noise > 0 && (va.name == dtype_ || va.name == hash_)) {
        ++totals_[va.name].dtype_metadata;
        continue;
      }
      compare_values(ia, ib, sa, sb, rule, scale);
    }
    for (std::uint32_t sb = rb.first_stat; sb < rb.first_stat + rb.stat_count; ++sb) {
      const auto name = b_.stats[sb].name;
      if (selected_[name] && find_stat(ra, name, a_) == kNoMatch) ++totals_[name].only_in_b;
    }
    if (record_diffs_.empty()) return;
    ++result_.divergent_records;
    remember_earliest(key, {ia, ib, record_diffs_});
  }

  // Keeps the top + 1 earliest divergent records (the first and the next
  // `top`) in a heap whose front is the latest kept.
  void remember_earliest(OrderKey key, DivergentRecord record) {
    auto later = [](const auto& x, const auto& y) { return x.first < y.first; };
    if (options_.top == 0 || earliest_.size() < options_.top + 1) {
      earliest_.emplace_back(key, std::move(record));
      std::push_heap(earliest_.begin(), earliest_.end(), later);
    } else if (key < earliest_.front().first) {
      std::pop_heap(earliest_.begin(), earliest_.end(), later);
      earliest_.back() = {key, std::move(record)};
      std::push_heap(earliest_.begin(), earliest_.end(), later);
    }
  }

  void compare_values(std::uint32_t ia, std::uint32_t ib, std::uint32_t sa, std::uint32_t sb,
                      const PairRule& rule, const TensorScale& scale) {
    const StatValue& va = a_.stats[sa];
    const StatValue& vb = b_.stats[sb];
    StatTotals& totals = totals_[va.name];
    if (va.kind == StatKind::kError && vb.kind == StatKind::kError) {
      ++totals.failed_both;
      return;
    }
    ++totals.compared;
    ++result_.values_compared;
    constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
    ValueDiff diff{ia, ib, sa, sb, kNaN, kInfinity, kNaN, false};
    bool same = false;
    if (va.kind != vb.kind) {
      same = false;
    } else if (va.kind == StatKind::kNumber) {
      same = compare_numbers(va.number, vb.number, va.name, rule, scale, diff);
      if (!std::isnan(diff.rel_error)) {
        totals.max_rel_error = std::max(totals.max_rel_error, diff.rel_error);
      }
    } else if (va.kind == StatKind::kNull) {
      same = true;
    } else {
      same = a_.text(va) == b_.text(vb);
    }
    if (same) return;
    if (va.kind != StatKind::kNumber || vb.kind != StatKind::kNumber) {
      totals.max_rel_error = kInfinity;
    }
    ++totals.divergent;
    ++result_.divergent_values;
    record_diffs_.push_back(diff);
    remember_worst(diff);
  }

  bool compare_numbers(double x, double y, std::uint32_t stat, const PairRule& rule,
                       const TensorScale& scale, ValueDiff& diff) {
    double magnitude = std::max(std::fabs(x), std::fabs(y));
    double atol = rule.tolerance.atol;
    if (scaled_[stat] && !exact_[stat]) {
      const bool is_sum = stat == sum_;
      if (!std::isnan(scale.abs_mean) && (!is_sum || !std::isnan(scale.numel))) {
        // Per element for a sum: atol and rtol mean what they mean for the mean.
        const double n = is_sum ? scale.numel : 1.0;
        magnitude = std::max(magnitude, scale.abs_mean * n);
        atol *= n;
        diff.tensor_scale = true;
      } else {
        ++totals_[stat].own_scale;
      }
    }
    diff.scale = magnitude;
    diff.abs_error = std::fabs(x - y);
    if (x == y || (std::isnan(x) && std::isnan(y))) {
      diff.rel_error = 0;
      return true;
    }
    if (!std::isfinite(x) || !std::isfinite(y)) {
      diff.rel_error = kInfinity;
      return false;
    }
    diff.rel_error = magnitude > 0 ? diff.abs_error / magnitude : kInfinity;
    if (exact_[stat]) return false;
    if (rule.noise > 0) note_noise(rule, stat, atol, diff);
    const double rtol = extreme_[stat] ? rule.extreme_rtol : rule.tolerance.rtol;
    return diff.abs_error <= atol + rtol * magnitude;
  }

  // A number compared across dtypes: its rel_error in units of the lower
  // precision's noise. Values within atol (near zero) say nothing of it.
  void note_noise(const PairRule& rule, std::uint32_t stat, double atol, ValueDiff& diff) {
    if (!std::isfinite(diff.rel_error)) return;
    diff.noise_ratio = diff.rel_error / (rule.noise * (extreme_[stat] ? 2 : 1));
    diff.noise_dtype = rule.noise_dtype;
    if (diff.abs_error <= atol) return;
    auto& largest = result_.largest_noise;
    if (!largest || diff.noise_ratio > largest->noise_ratio) largest = diff;
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
  std::vector<bool> scaled_;
  std::vector<bool> extreme_;
  std::vector<bool> used_;
  std::vector<StatTotals> totals_;
  TensorScales scales_;
  PairRules rules_;
  std::uint32_t sum_, dtype_, hash_;
  std::vector<ValueDiff> record_diffs_;
  std::vector<ValueDiff> worst_;
  std::vector<std::pair<OrderKey, DivergentRecord>> earliest_;
  DiffResult result_;
};

}  // namespace

DiffResult diff_traces(const ActivationTrace& a, const ActivationTrace& b, const NamePool& names,
                       const DiffOptions& options) {
  return Comparer(a, b, names, options).run();
}

}  // namespace regiontrace::cli
