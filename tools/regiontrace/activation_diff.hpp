// Compares two activation traces record by record: what `regiontrace diff`
// computes, apart from how it is printed.
//
// Records are aligned by (module, tensor, step, occurrence), so file order and
// number formatting do not matter. Every statistic present in both records is
// compared; numbers with a tolerance, the exact statistics (kExactStats) and
// all non-numeric values (strings, arrays) for identity; dtype and hash not
// where the two float dtypes differ (DtypeMismatch).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "activation_records.hpp"

namespace regiontrace::cli {

// Numbers a and b match when |a - b| <= atol + rtol * scale, where scale is
// max(|a|, |b|) (symmetric, so `diff A B` and `diff B A` agree), except for
// the statistics that cancel (kScaledStats).
struct Tolerance {
  double rtol = 0;
  double atol = 0;
};

// The tolerance for records of a dtype: torch.testing.assert_close's
// defaults where they are loose enough for statistics of a whole network,
// looser for fp32 (see tolerance_for_dtype). `dtype` is as the sink writes it
// ("torch.bfloat16") or short ("bf16", "bfloat16"); nullopt when unknown.
struct DtypeTolerance {
  const char* name;        // canonical: "float32"
  const char* short_name;  // "fp32", for "below bf16 resolution"
  Tolerance tolerance;
  // The relative rounding noise a port's statistics carry in this dtype; 0
  // for integers and bool. See kNoiseTolerance.
  double noise = 0;
};
std::optional<DtypeTolerance> tolerance_for_dtype(std::string_view dtype);
// Records without a dtype: fp32, the dtype of most references.
DtypeTolerance default_dtype_tolerance();

// `sum` and `mean` cancel: the sum of a tensor centred on zero is a small
// difference of large terms, and its relative error says nothing. They are
// compared on the tensor's scale instead: mean against abs_mean, sum against
// abs_mean * numel (numel from `numel`, else the product of `shape`, else
// sum / mean, else (l2 / rms)^2). Without abs_mean (or rms) or without a way
// to know numel they fall back to their own value.
inline const char* const kScaledStats[] = {"sum", "mean"};

// Compared exactly even when numeric: identity of layout, type and bytes, and
// counts where one more NaN or Inf is a real difference.
inline const char* const kExactStats[] = {"shape", "dtype",     "device",   "hash",
                                          "numel", "nan_count", "inf_count"};

// Record pairs whose dtypes are two different float types (an fp32 reference,
// a bf16 port): their dtype and hash differ by construction, so they are
// metadata there, not compared; every other value is judged against the
// noise of the lower precision and diverges beyond kNoiseTolerance times it.
// One rule for fp32 against bf16 that bf16's own tolerance (4 unit roundoffs,
// for two sides that both round) cannot give: a 1% bug is 2.5 bf16 noises,
// rounding stays below one. Only one side rounds, in its storage: measured on
// the parity example's stack, averages (abs_mean, std, sum) moved 0.2x bf16's
// unit roundoff, extremes (kExtremeStats) 2.2x, hence their doubled noise.
inline constexpr double kNoiseTolerance = 2;
inline const char* const kExtremeStats[] = {"min", "max", "absmax"};

struct DtypeMismatch {
  std::string a;  // canonical dtype names
  std::string b;
  std::string noise_dtype;  // the lower precision, short: "bf16"
  double noise = 0;         // its DtypeTolerance::noise
  std::uint64_t records = 0;
};

// What a ratio to the noise says about a difference; `ratio` is a
// ValueDiff::noise_ratio. "below resolution" (<= 1): rounding could make it;
// "within noise" (<= kNoiseTolerance); else "above noise".
const char* noise_verdict(double ratio);

// Module renaming before records are aligned (--strip-prefix, --map).
struct NameRules {
  std::vector<std::string> strip_a;  // prefixes removed from A's module names
  std::vector<std::string> strip_b;
  // old -> new, at dot boundaries anywhere in a name, on both sides:
  // {"layers", "blocks"} turns "transformer.layers.3" into "transformer.blocks.3".
  std::vector<std::pair<std::string, std::string>> maps;

  bool empty() const { return strip_a.empty() && strip_b.empty() && maps.empty(); }
  std::string apply(const std::string& module, bool side_a) const;
};

struct DiffOptions {
  std::optional<std::string> dtype;  // every record compared as this dtype (--dtype)
  std::optional<double> rtol;        // --rtol / --atol: win over any dtype
  std::optional<double> atol;
  std::vector<std::string> stats;  // empty: every statistic
  std::size_t top = 10;            // worst values, next divergences, one-side records; 0 = all
};

// One statistic of one aligned record pair that differs.
struct ValueDiff {
  std::uint32_t a_record = 0;  // indices into ActivationTrace::records
  std::uint32_t b_record = 0;
  std::uint32_t a_stat = 0;  // indices into ActivationTrace::stats
  std::uint32_t b_stat = 0;
  double abs_error = 0;  // NaN when not both numbers
  // |a-b| / scale; infinite for mismatched kinds or texts.
  double rel_error = 0;
  // max(|a|,|b|), or the tensor's scale for kScaledStats; NaN when not numbers.
  double scale = 0;
  bool tensor_scale = false;  // scale is abs_mean (* numel), not the values'
  // rel_error over the noise of the pair's lower precision (doubled for
  // kExtremeStats); NaN unless the two records' float dtypes differ.
  double noise_ratio = std::numeric_limits<double>::quiet_NaN();
  const char* noise_dtype = nullptr;  // short name of that precision
};

// A record pair with at least one divergent statistic.
struct DivergentRecord {
  std::uint32_t a_record = 0;
  std::uint32_t b_record = 0;
  std::vector<ValueDiff> stats;
};

// A module name of one file that matched nothing, and the other file's
// unmatched name nearest to it (edit distance).
struct NameSuggestion {
  std::uint32_t a_module = 0;  // in the NamePool
  std::uint32_t b_module = 0;
  std::uint64_t a_records = 0;  // A's unmatched records with that module
  std::string hint;             // "--strip-prefix A=transformer." when one is a prefix away
};

// One tolerance as applied: to how many aligned record pairs.
struct ToleranceUse {
  std::string dtype;  // canonical; "float32 (no dtype in the records)" for the default
  Tolerance tolerance;
  double extreme_rtol = 0;  // rtol of kExtremeStats: tolerance.rtol unless the dtypes differ
  std::uint64_t records = 0;
};

struct StatTotals {
  std::uint32_t name = 0;
  bool exact = false;
  std::uint64_t compared = 0;
  std::uint64_t divergent = 0;
  std::uint64_t only_in_a = 0;  // aligned records where only one side has this stat
  std::uint64_t only_in_b = 0;
  std::uint64_t failed_both = 0;  // "<error: ...>" on both sides: nothing to compare
  // Over every compared value, not only the divergent ones: how close the run came.
  double max_rel_error = 0;
  std::uint64_t own_scale = 0;       // kScaledStats compared on their own value (no scale known)
  std::uint64_t dtype_metadata = 0;  // not compared: the records' float dtypes differ
};

struct DiffResult {
  std::uint64_t matched_records = 0;
  std::uint64_t divergent_records = 0;
  std::uint64_t values_compared = 0;
  std::uint64_t divergent_values = 0;
  // The earliest divergent record by (step, execution order), with all its
  // divergent stats; then the next ones in that order, at most options.top.
  // Execution order is A's when A has seq numbers (or B has none), else B's.
  // A record without a step counts as the step before it in that order.
  std::optional<std::uint32_t> first_divergent_record;
  std::vector<ValueDiff> first_divergence;
  std::vector<DivergentRecord> next_divergences;
  // Fewer than half the records of the smaller file found a partner: the
  // names differ, and no divergence is declared (equal() is false).
  bool names_mismatch = false;
  std::vector<NameSuggestion> closest_names;  // at most options.top
  std::vector<ToleranceUse> tolerances;
  std::vector<DtypeMismatch> dtype_mismatches;
  // Of the values compared across dtypes beyond atol, the one with the largest
  // noise_ratio: how close the port came, when nothing diverged.
  std::optional<ValueDiff> largest_noise;
  std::vector<ValueDiff> worst;  // worst first, at most options.top
  std::uint64_t only_in_a_count = 0;
  std::uint64_t only_in_b_count = 0;
  std::vector<std::uint32_t> only_in_a;  // record indices in execution order, at most top
  std::vector<std::uint32_t> only_in_b;
  std::vector<StatTotals> stats;  // sorted by name

  bool equal() const {
    return !names_mismatch && divergent_values == 0 && only_in_a_count == 0 && only_in_b_count == 0;
  }
};

// Throws std::invalid_argument when options.stats names a statistic that is
// in neither file, or options.dtype is no dtype.
DiffResult diff_traces(const ActivationTrace& a, const ActivationTrace& b, const NamePool& names,
                       const DiffOptions& options);

}  // namespace regiontrace::cli
