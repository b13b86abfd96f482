// The statistics a run asked for (`stats`), in the order records list them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace regiontrace::activation {

enum class Stat : std::uint8_t {
  kSum,
  kMean,
  kAbsMean,
  kMin,
  kMax,
  kAbsmax,
  kStd,
  kRms,
  kL2,
  kNanCount,
  kInfCount,
  kZeroCount,
  kNumel,
  kShape,
  kDtype,
  kDevice,
  kHash,
};

// The key a record writes the statistic under ("abs_mean").
std::string_view stat_name(Stat stat);
// Every statistic name, in canonical order, then "all".
std::vector<std::string> stat_choices();

class StatSet {
 public:
  // Names as validated by the schema; "all" adds every statistic. Repeats
  // are kept once, the first time they appear.
  static StatSet parse(const std::vector<std::string>& names);

  const std::vector<Stat>& order() const { return order_; }
  bool needs_numeric() const { return numeric_; }
  bool needs_hash() const { return hash_; }

 private:
  std::vector<Stat> order_;
  bool numeric_ = false;
  bool hash_ = false;
};

}  // namespace regiontrace::activation
