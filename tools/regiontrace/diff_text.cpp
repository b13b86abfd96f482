#include <cmath>
#include <cstdio>
#include <ostream>

#include "diff_output.hpp"
#include "text_table.hpp"

namespace regiontrace::cli {
namespace {

std::string show_value(const ActivationTrace& t, const StatValue& v) {
  switch (v.kind) {
    case StatKind::kNumber:
      return format_number(v.number);
    case StatKind::kNull:
      return "null";
    case StatKind::kError:
    case StatKind::kText:
      return std::string(t.text(v));
  }
  return {};
}

std::string location(const ActivationTrace& t, const ActivationRecord& r) {
  return t.path + ":" + std::to_string(r.line);
}

std::string format_ratio(double ratio) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), ratio < 10 ? "%.2g" : "%.0f", ratio);
  return buf;
}

// "below bf16 resolution", "within bf16 noise", "above bf16 noise".
std::string verdict_text(const ValueDiff& d) {
  std::string v = noise_verdict(d.noise_ratio);
  const auto space = v.find(' ');
  return v.substr(0, space + 1) + d.noise_dtype + v.substr(space);
}

class TextReport {
 public:
  explicit TextReport(const DiffView& view)
      : a_(view.a), b_(view.b), names_(view.names), result_(view.result) {}

  void print(std::ostream& out) const {
    out << "A: " << a_.path << " (" << a_.records.size() << " records)\n";
    out << "B: " << b_.path << " (" << b_.records.size() << " records)\n";
    out << "tolerance: |a-b| <= atol + rtol*max(|a|,|b|); sum and mean against the tensor's "
           "scale, abs_mean*numel and abs_mean; shape, dtype, device, hash, numel, nan_count, "
           "inf_count and texts exactly\n";
    for (const auto& t : result_.tolerances) {
      out << "  " << t.dtype << ": rtol=" << format_short(t.tolerance.rtol)
          << " atol=" << format_short(t.tolerance.atol);
      if (t.extreme_rtol != t.tolerance.rtol) {
        out << ", min/max/absmax rtol=" << format_short(t.extreme_rtol);
      }
      out << " (" << t.records << (t.records == 1 ? " record pair)\n" : " record pairs)\n");
    }
    for (const auto& m : result_.dtype_mismatches) {
      out << "note: dtype differs (" << m.a << " in A, " << m.b << " in B, " << m.records
          << (m.records == 1 ? " record pair" : " record pairs")
          << "): dtype and hash are metadata there, not compared; each value is judged against "
          << m.noise_dtype << " noise (" << format_short(m.noise)
          << " relative, twice that for min/max/absmax) and diverges beyond "
          << format_short(kNoiseTolerance) << "x it\n";
    }
    for (const auto* t : {&a_, &b_}) {
      if (t->dropped > 0) {
        out << "warning: " << t->path << " reports " << t->dropped
            << " dropped records: the comparison is incomplete\n";
      }
    }
    print_names_mismatch(out);
    print_first_divergence(out);
    print_next_divergences(out);
    print_worst(out);
    print_one_side(out, "A", a_, result_.only_in_a, result_.only_in_a_count);
    print_one_side(out, "B", b_, result_.only_in_b, result_.only_in_b_count);
    print_stats(out);
    print_largest_noise(out);
    out << "\nTotals: " << result_.matched_records << " records matched, "
        << result_.divergent_records << " divergent (" << result_.divergent_values << " of "
        << result_.values_compared << " values), " << result_.only_in_a_count << " only in A, "
        << result_.only_in_b_count << " only in B\n";
    out << "Result: "
        << (result_.names_mismatch ? "NOT COMPARED: the module names do not match"
            : result_.equal()      ? "EQUAL within tolerance"
                                   : "DIVERGENT");
    // Equal across dtypes says only that nothing rose above the noise.
    if (result_.equal() && result_.largest_noise) {
      const auto& d = *result_.largest_noise;
      out << "; the largest difference is " << format_ratio(d.noise_ratio) << "x " << d.noise_dtype
          << " noise: " << verdict_text(d);
    }
    out << "\n";
  }

 private:
  std::string key_text(const ActivationRecord& r) const {
    std::string s = "module " + names_.name(r.module) + "  tensor " + names_.name(r.tensor) +
                    "  step " + format_step(r.step);
    if (r.occurrence > 0) s += "  occurrence " + std::to_string(r.occurrence);
    return s;
  }

  std::string stat_text(const ValueDiff& d) const {
    std::string name = names_.name(a_.stats[d.a_stat].name);
    if (d.tensor_scale) name += name == "sum" ? " (vs abs_mean*numel)" : " (vs abs_mean)";
    return name;
  }

  std::string noise_line(const ValueDiff& d) const {
    const auto& r = a_.records[d.a_record];
    return names_.name(r.module) + " " + names_.name(r.tensor) + " step " + format_step(r.step) +
           ": max rel error " + format_short(d.rel_error) + " = " + format_ratio(d.noise_ratio) +
           "x " + d.noise_dtype + " noise (" + names_.name(a_.stats[d.a_stat].name) +
           "'s: " + format_short(d.rel_error / d.noise_ratio) + "): " + verdict_text(d);
  }

  void print_largest_noise(std::ostream& out) const {
    if (!result_.largest_noise) return;
    out << "\nLargest difference against " << result_.largest_noise->noise_dtype << " noise:\n  "
        << noise_line(*result_.largest_noise) << "\n";
  }

  void print_names_mismatch(std::ostream& out) const {
    if (!result_.names_mismatch) return;
    out << "\nOnly " << result_.matched_records << " of " << a_.records.size()
        << " records of A and " << b_.records.size()
        << " of B match by (module, tensor, step): the module names differ, so no divergence "
           "is declared.\nAlign them with --strip-prefix A=PREFIX / B=PREFIX or --map OLD=NEW. "
           "Closest unmatched names:\n";
    using A = TextTable::Align;
    TextTable table({"module in A", "records", "closest in B", "try"},
                    {A::kLeft, A::kRight, A::kLeft, A::kLeft});
    for (const auto& s : result_.closest_names) {
      table.add_row(
          {names_.name(s.a_module), std::to_string(s.a_records), names_.name(s.b_module), s.hint});
    }
    table.print(out);
  }

  void print_first_divergence(std::ostream& out) const {
    if (!result_.first_divergent_record) return;
    const auto& ra = a_.records[*result_.first_divergent_record];
    const auto& rb = b_.records[result_.first_divergence.front().b_record];
    out << "\nFirst divergence (earliest step, then execution order):\n  " << key_text(ra)
        << "\n  at " << location(a_, ra) << " and " << location(b_, rb) << "\n";
    const ValueDiff* noisy = noisiest(result_.first_divergence);
    std::vector<std::string> header = {"stat", "A", "B", "abs_error", "rel_error"};
    if (noisy != nullptr) header.push_back(std::string("x ") + noisy->noise_dtype + " noise");
    std::vector<TextTable::Align> align(header.size(), TextTable::Align::kRight);
    align[0] = TextTable::Align::kLeft;
    TextTable table(header, align);
    for (const auto& d : result_.first_divergence) {
      const auto& va = a_.stats[d.a_stat];
      std::vector<std::string> row = {stat_text(d), show_value(a_, va),
                                      show_value(b_, b_.stats[d.b_stat]), format_short(d.abs_error),
                                      format_short(d.rel_error)};
      if (noisy != nullptr) {
        row.push_back(std::isnan(d.noise_ratio) ? "-" : format_ratio(d.noise_ratio));
      }
      table.add_row(row);
    }
    table.print(out);
    if (noisy != nullptr) out << "  " << noise_line(*noisy) << "\n";
  }

  // The records diverging after the first, in the same order; each with its
  // worst statistic.
  void print_next_divergences(std::ostream& out) const {
    if (result_.next_divergences.empty()) return;
    out << "\nNext " << result_.next_divergences.size() << " of " << result_.divergent_records - 1
        << " divergent records after it:\n";
    using A = TextTable::Align;
    TextTable table({"module", "tensor", "step", "occ", "stat", "A", "B", "rel_error", "A line"},
                    {A::kLeft, A::kLeft, A::kRight, A::kRight, A::kLeft, A::kRight, A::kRight,
                     A::kRight, A::kRight});
    for (const auto& rec : result_.next_divergences) {
      const auto& r = a_.records[rec.a_record];
      const auto& d = *std::max_element(
          rec.stats.begin(), rec.stats.end(),
          [](const ValueDiff& x, const ValueDiff& y) { return x.rel_error < y.rel_error; });
      table.add_row({names_.name(r.module), names_.name(r.tensor), format_step(r.step),
                     std::to_string(r.occurrence), stat_text(d), show_value(a_, a_.stats[d.a_stat]),
                     show_value(b_, b_.stats[d.b_stat]), format_short(d.rel_error),
                     std::to_string(r.line)});
    }
    table.print(out);
  }

  void print_worst(std::ostream& out) const {
    if (result_.worst.empty()) return;
    out << "\nWorst " << result_.worst.size() << " of " << result_.divergent_values
        << " divergent values (by relative error):\n";
    using A = TextTable::Align;
    TextTable table({"module", "tensor", "step", "occ", "stat", "A", "B", "rel_error", "A line"},
                    {A::kLeft, A::kLeft, A::kRight, A::kRight, A::kLeft, A::kRight, A::kRight,
                     A::kRight, A::kRight});
    for (const auto& d : result_.worst) {
      const auto& r = a_.records[d.a_record];
      const auto& va = a_.stats[d.a_stat];
      table.add_row({names_.name(r.module), names_.name(r.tensor), format_step(r.step),
                     std::to_string(r.occurrence), names_.name(va.name), show_value(a_, va),
                     show_value(b_, b_.stats[d.b_stat]), format_short(d.rel_error),
                     std::to_string(r.line)});
    }
    table.print(out);
  }

  void print_one_side(std::ostream& out, const char* side, const ActivationTrace& t,
                      const std::vector<std::uint32_t>& records, std::uint64_t count) const {
    if (count == 0) return;
    out << "\nOnly in " << side << " (" << t.path << "): " << count
        << (count == 1 ? " record" : " records");
    if (records.size() < count) out << ", first " << records.size() << " shown";
    out << "\n";
    using A = TextTable::Align;
    TextTable table({"module", "tensor", "step", "occ", "line"},
                    {A::kLeft, A::kLeft, A::kRight, A::kRight, A::kRight});
    for (auto i : records) {
      const auto& r = t.records[i];
      table.add_row({names_.name(r.module), names_.name(r.tensor), format_step(r.step),
                     std::to_string(r.occurrence), std::to_string(r.line)});
    }
    table.print(out);
  }

  void print_stats(std::ostream& out) const {
    if (result_.stats.empty() || result_.names_mismatch) return;  // nothing was compared
    out << "\nBy statistic:\n";
    using A = TextTable::Align;
    TextTable table({"stat", "compared", "divergent", "max_rel_error", "note"},
                    {A::kLeft, A::kRight, A::kRight, A::kRight, A::kLeft});
    for (const auto& s : result_.stats) {
      std::string note = s.exact ? "exact" : "";
      auto add_note = [&note](const std::string& text) {
        note += (note.empty() ? "" : "; ") + text;
      };
      if (s.only_in_a > 0) add_note("only in A for " + std::to_string(s.only_in_a) + " records");
      if (s.only_in_b > 0) add_note("only in B for " + std::to_string(s.only_in_b) + " records");
      if (s.failed_both > 0)
        add_note("failed on both sides " + std::to_string(s.failed_both) + "x");
      if (s.dtype_metadata > 0) {
        add_note("not compared where the dtypes differ (" + std::to_string(s.dtype_metadata) +
                 " records)");
      }
      if (s.own_scale > 0) {
        add_note(
            "against its own value for " + std::to_string(s.own_scale) +
            " records (no abs_mean, or no numel, shape or mean: add numel to the sink's stats)");
      }
      table.add_row({names_.name(s.name), std::to_string(s.compared), std::to_string(s.divergent),
                     format_short(s.max_rel_error), note});
    }
    table.print(out);
  }

  const ActivationTrace& a_;
  const ActivationTrace& b_;
  const NamePool& names_;
  const DiffResult& result_;
};

}  // namespace

void print_diff_text(std::ostream& out, const DiffView& view) {
  TextReport(view).print(out);
}

}  // namespace regiontrace::cli
