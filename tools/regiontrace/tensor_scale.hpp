// What a record pair says about its tensor's size and magnitude: `sum` and
// `mean` are compared against it (abs_mean*numel and abs_mean) rather than
// against their own value, which cancellation may bring near zero.
#pragma once

#include <cstdint>
#include <limits>

#include "activation_records.hpp"

namespace regiontrace::cli {

struct TensorScale {
  double abs_mean = std::numeric_limits<double>::quiet_NaN();
  double numel = std::numeric_limits<double>::quiet_NaN();
};

class TensorScales {
 public:
  TensorScales(const ActivationTrace& a, const ActivationTrace& b, const NamePool& names);

  // The larger of the two records' figures; each NaN when neither tells it.
  TensorScale of_pair(const ActivationRecord& ra, const ActivationRecord& rb) const;

 private:
  TensorScale of_record(const ActivationRecord& r, const ActivationTrace& t) const;

  const ActivationTrace& a_;
  const ActivationTrace& b_;
  std::uint32_t sum_, mean_, abs_mean_, rms_, l2_, numel_, shape_;
};

}  // namespace regiontrace::cli
