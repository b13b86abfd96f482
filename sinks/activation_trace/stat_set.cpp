#include "stat_set.hpp"

#include <algorithm>
#include <stdexcept>

namespace regiontrace::activation {
namespace {

constexpr Stat kAll[] = {
    Stat::kSum,   Stat::kMean,  Stat::kAbsMean, Stat::kMin,      Stat::kMax,      Stat::kAbsmax,
    Stat::kStd,   Stat::kRms,   Stat::kL2,      Stat::kNanCount, Stat::kInfCount, Stat::kZeroCount,
    Stat::kNumel, Stat::kShape, Stat::kDtype,   Stat::kDevice,   Stat::kHash};

bool is_numeric(Stat s) {
  return s != Stat::kNumel && s != Stat::kShape && s != Stat::kDtype && s != Stat::kDevice &&
         s != Stat::kHash;
}

}  // namespace

std::string_view stat_name(Stat stat) {
  switch (stat) {
    case Stat::kSum:
      return "sum";
    case Stat::kMean:
      return "mean";
    case Stat::kAbsMean:
      return "abs_mean";
    case Stat::kMin:
      return "min";
    case Stat::kMax:
      return "max";
    case Stat::kAbsmax:
      return "absmax";
    case Stat::kStd:
      return "std";
    case Stat::kRms:
      return "rms";
    case Stat::kL2:
      return "l2";
    case Stat::kNanCount:
      return "nan_count";
    case Stat::kInfCount:
      return "inf_count";
    case Stat::kZeroCount:
      return "zero_count";
    case Stat::kNumel:
      return "numel";
    case Stat::kShape:
      return "shape";
    case Stat::kDtype:
      return "dtype";
    case Stat::kDevice:
      return "device";
    case Stat::kHash:
      return "hash";
  }
  return "?";
}

std::vector<std::string> stat_choices() {
  std::vector<std::string> out;
  for (Stat s : kAll) out.emplace_back(stat_name(s));
  out.emplace_back("all");
  return out;
}

StatSet StatSet::parse(const std::vector<std::string>& names) {
  StatSet set;
  auto add = [&set](Stat s) {
    if (std::find(set.order_.begin(), set.order_.end(), s) != set.order_.end()) return;
    set.order_.push_back(s);
    set.numeric_ = set.numeric_ || is_numeric(s);
    set.hash_ = set.hash_ || s == Stat::kHash;
  };
  for (const std::string& name : names) {
    if (name == "all") {
      for (Stat s : kAll) add(s);
      continue;
    }
    const auto it = std::find_if(std::begin(kAll), std::end(kAll),
                                 [&name](Stat s) { return stat_name(s) == name; });
    if (it == std::end(kAll)) {
      throw std::invalid_argument("unknown statistic `" + name + "`");
    }
    add(*it);
  }
  return set;
}

}  // namespace regiontrace::activation
