#include "activation_diff.hpp"
#include "regiontrace/sdk/text_format.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <unordered_map>

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

bool worse(const ValueDiff& x, const ValueDiff& y) {
  if (x.rel_error != y.rel_error) return x.rel_error > y.rel_error;
  const double ax = std::isnan(x.abs_error) ? kInfinity : x.abs_error;
  const double ay = std::isnan(y.abs_error) ? kInfinity : y.abs_error;
  if (ax != ay) return ax > ay;
  return x.a_record < y.a_record;  // earlier in A's execution first
}

std::string strip_quotes(std::string_view text) {
  if (text.size() >= 2 && text.front() == '"' && text.back() == '"') {
    text = text.substr(1, text.size() - 2);
  }
  return std::string(text);
}

// For suggesting the name a module has on the other side.
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

// How a record pair is compared: its tolerance and, when the two float dtypes
// differ, the noise of the lower precision.
struct PairRule {
  Tolerance tolerance;
  double extreme_rtol = 0;
  double noise = 0;                   // 0: the dtypes do not differ
  const char* noise_dtype = nullptr;  // a string literal of the dtype table
};

// What a record says about its tensor's size and magnitude.
struct TensorScale {
  double abs_mean = std::numeric_limits<double>::quiet_NaN();
  double numel = std::numeric_limits<double>::quiet_NaN();
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
    if (options.dtype) {
      forced_ = tolerance_for_dtype(*options.dtype);
      if (!forced_) {
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
    mean_ = names.find("mean");
    abs_mean_ = names.find("abs_mean");
    rms_ = names.find("rms");
    l2_ = names.find("l2");
    numel_ = names.find("numel");
    shape_ = names.find("shape");
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
    if (result_.names_mismatch) suggest_names(match, b_matched);
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
    result_.tolerances = std::move(tolerance_uses_);
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
    const PairRule rule = rule_for(ra, rb);
    const TensorScale scale = pair_scale(ra, rb);
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

  static std::uint32_t find_stat(const ActivationRecord& r, std::uint32_t name,
                                 const ActivationTrace& t) {
    if (name == NamePool::kMissing) return kNoMatch;
    for (std::uint32_t s = r.first_stat; s < r.first_stat + r.stat_count; ++s) {
      if (t.stats[s].name == name) return s;
    }
    return kNoMatch;
  }

  static double number(const ActivationRecord& r, std::uint32_t name, const ActivationTrace& t) {
    const auto s = find_stat(r, name, t);
    if (s == kNoMatch || t.stats[s].kind != StatKind::kNumber) {
      return std::numeric_limits<double>::quiet_NaN();
    }
    return t.stats[s].number;
  }

  TensorScale record_scale(const ActivationRecord& r, const ActivationTrace& t) const {
    TensorScale s;
    s.abs_mean = number(r, abs_mean_, t);
    if (!std::isfinite(s.abs_mean)) s.abs_mean = number(r, rms_, t);  // rms >= abs_mean
    s.numel = number(r, numel_, t);
    if (!std::isfinite(s.numel)) {
      const auto shape = find_stat(r, shape_, t);
      if (shape != kNoMatch && t.stats[shape].kind == StatKind::kText) {
        s.numel = shape_numel(t.text(t.stats[shape]));
      }
    }
    if (!std::isfinite(s.numel)) {
      // The sink's mean is its sum / numel in double: the ratio is exact. A
      // Python reference's is close enough for a tolerance's scale.
      const double sum = number(r, sum_, t);
      const double mean = number(r, mean_, t);
      if (std::isfinite(sum) && std::isfinite(mean) && mean != 0) {
        s.numel = std::round(std::fabs(sum / mean));
      }
    }
    if (!std::isfinite(s.numel)) {
      const double l2 = number(r, l2_, t);
      const double rms = number(r, rms_, t);
      if (std::isfinite(l2) && std::isfinite(rms) && rms != 0) {
        s.numel = std::round((l2 / rms) * (l2 / rms));
      }
    }
    if (!(s.numel >= 1)) s.numel = std::numeric_limits<double>::quiet_NaN();
    if (!(s.abs_mean > 0) || !std::isfinite(s.abs_mean)) {
      s.abs_mean = std::numeric_limits<double>::quiet_NaN();
    }
    return s;
  }

  // "[1,16,32]" -> 512; NaN when it is not a list of integers.
  static double shape_numel(std::string_view text) {
    if (text.size() < 2 || text.front() != '[' || text.back() != ']') {
      return std::numeric_limits<double>::quiet_NaN();
    }
    double n = 1;
    double dim = 0;
    bool digits = false;
    for (char c : text.substr(1)) {
      if (c >= '0' && c <= '9') {
        dim = dim * 10 + (c - '0');
        digits = true;
      } else if (c == ',' || c == ']') {
        if (!digits) return c == ']' && n == 1 ? 1 : std::numeric_limits<double>::quiet_NaN();
        n *= dim;
        dim = 0;
        digits = false;
      } else if (c != ' ') {
        return std::numeric_limits<double>::quiet_NaN();
      }
    }
    return n;
  }

  TensorScale pair_scale(const ActivationRecord& ra, const ActivationRecord& rb) const {
    const TensorScale sa = record_scale(ra, a_);
    const TensorScale sb = record_scale(rb, b_);
    auto larger = [](double x, double y) {
      if (std::isnan(x)) return y;
      if (std::isnan(y)) return x;
      return std::max(x, y);
    };
    return {larger(sa.abs_mean, sb.abs_mean), larger(sa.numel, sb.numel)};
  }

  // The tolerance of a record pair: --dtype's, else the noise of the lower
  // precision when the two float dtypes differ, else the looser of the two
  // records' dtypes, else fp32's; --rtol / --atol replace either part.
  PairRule rule_for(const ActivationRecord& ra, const ActivationRecord& rb) {
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
    auto it = std::find_if(tolerance_uses_.begin(), tolerance_uses_.end(),
                           [&](const ToleranceUse& u) { return u.dtype == label; });
    if (it == tolerance_uses_.end()) {
      tolerance_uses_.push_back({label, tol, extreme_rtol, 0});
      it = tolerance_uses_.end() - 1;
    }
    ++it->records;
    rule.tolerance = tol;
    rule.extreme_rtol = extreme_rtol;
    return rule;
  }

  // Counts a pair of differing float dtypes; returns the lower precision.
  static const DtypeTolerance& lower(const DtypeTolerance& da, const DtypeTolerance& db) {
    return da.noise >= db.noise ? da : db;
  }
  const DtypeTolerance& count_mismatch(const DtypeTolerance& da, const DtypeTolerance& db) {
    auto& list = result_.dtype_mismatches;
    auto it = std::find_if(list.begin(), list.end(), [&](const DtypeMismatch& m) {
      return m.a == da.name && m.b == db.name;
    });
    if (it == list.end()) {
      const auto& low = lower(da, db);
      list.push_back({da.name, db.name, low.short_name, low.noise, 0});
      it = list.end() - 1;
    }
    ++it->records;
    return lower(da, db);
  }

  std::optional<DtypeTolerance> record_dtype(const ActivationRecord& r,
                                             const ActivationTrace& t) const {
    const auto s = find_stat(r, dtype_, t);
    if (s == kNoMatch || t.stats[s].kind != StatKind::kText) return std::nullopt;
    return tolerance_for_dtype(strip_quotes(t.text(t.stats[s])));
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

  // For each of A's unmatched module names (first seen first), B's unmatched
  // name closest to it.
  void suggest_names(const std::vector<std::uint32_t>& match, const std::vector<bool>& b_matched) {
    std::vector<std::uint32_t> a_names;
    std::unordered_map<std::uint32_t, std::uint64_t> a_counts;
    for (std::uint32_t i = 0; i < a_.records.size(); ++i) {
      if (match[i] != kNoMatch) continue;
      const auto m = a_.records[i].module;
      if (a_counts[m]++ == 0) a_names.push_back(m);
    }
    std::vector<std::uint32_t> b_names;
    std::unordered_map<std::uint32_t, bool> b_seen;
    for (std::uint32_t j = 0; j < b_.records.size(); ++j) {
      if (b_matched[j]) continue;
      const auto m = b_.records[j].module;
      if (!b_seen[m]) {
        b_seen[m] = true;
        b_names.push_back(m);
      }
    }
    if (b_names.empty()) return;
    constexpr std::size_t kMaxCandidates = 2000;  // keeps a huge mismatch quick
    if (b_names.size() > kMaxCandidates) b_names.resize(kMaxCandidates);
    const std::size_t shown = options_.top == 0 ? a_names.size() : options_.top;
    for (std::size_t k = 0; k < a_names.size() && k < shown; ++k) {
      const auto& name = names_.name(a_names[k]);
      std::uint32_t best = b_names.front();
      std::size_t best_distance = std::numeric_limits<std::size_t>::max();
      for (auto candidate : b_names) {
        const auto d = edit_distance(name, names_.name(candidate));
        if (d < best_distance) {
          best_distance = d;
          best = candidate;
        }
      }
      result_.closest_names.push_back(
          {a_names[k], best, a_counts[a_names[k]], alignment_hint(name, names_.name(best))});
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
  std::optional<DtypeTolerance> forced_;
  std::vector<ToleranceUse> tolerance_uses_;
  std::uint32_t sum_, mean_, abs_mean_, rms_, l2_, numel_, shape_, dtype_, hash_;
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
