#include "tensor_scale.hpp"

#include <cmath>
#include <string_view>

#include "record_stats.hpp"

namespace regiontrace::cli {
namespace {

// "[1,16,32]" -> 512; NaN when it is not a list of integers.
double shape_numel(std::string_view text) {
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

}  // namespace

TensorScales::TensorScales(const ActivationTrace& a, const ActivationTrace& b,
                           const NamePool& names)
    : a_(a),
      b_(b),
      sum_(names.find("sum")),
      mean_(names.find("mean")),
      abs_mean_(names.find("abs_mean")),
      rms_(names.find("rms")),
      l2_(names.find("l2")),
      numel_(names.find("numel")),
      shape_(names.find("shape")) {}

TensorScale TensorScales::of_record(const ActivationRecord& r, const ActivationTrace& t) const {
  TensorScale s;
  s.abs_mean = stat_number(r, abs_mean_, t);
  if (!std::isfinite(s.abs_mean)) s.abs_mean = stat_number(r, rms_, t);  // rms >= abs_mean
  s.numel = stat_number(r, numel_, t);
  if (!std::isfinite(s.numel)) {
    const auto shape = find_stat(r, shape_, t);
    if (shape != kNoMatch && t.stats[shape].kind == StatKind::kText) {
      s.numel = shape_numel(t.text(t.stats[shape]));
    }
  }
  if (!std::isfinite(s.numel)) {
    // The sink's mean is its sum / numel in double: the ratio is exact. A
    // Python reference's is close enough for a tolerance's scale.
    const double sum = stat_number(r, sum_, t);
    const double mean = stat_number(r, mean_, t);
    if (std::isfinite(sum) && std::isfinite(mean) && mean != 0) {
      s.numel = std::round(std::fabs(sum / mean));
    }
  }
  if (!std::isfinite(s.numel)) {
    const double l2 = stat_number(r, l2_, t);
    const double rms = stat_number(r, rms_, t);
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

TensorScale TensorScales::of_pair(const ActivationRecord& ra, const ActivationRecord& rb) const {
  const TensorScale sa = of_record(ra, a_);
  const TensorScale sb = of_record(rb, b_);
  auto larger = [](double x, double y) {
    if (std::isnan(x)) return y;
    if (std::isnan(y)) return x;
    return std::max(x, y);
  };
  return {larger(sa.abs_mean, sb.abs_mean), larger(sa.numel, sb.numel)};
}

}  // namespace regiontrace::cli
