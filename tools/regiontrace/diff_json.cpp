#include <cmath>

#include "diff_output.hpp"
#include "regiontrace/sdk/json_writer.hpp"

namespace regiontrace::cli {
namespace {

void write_value(json::Writer& w, const ActivationTrace& t, const StatValue& v) {
  switch (v.kind) {
    case StatKind::kNumber:
      w.value(v.number);
      break;
    case StatKind::kNull:
      w.value(nullptr);
      break;
    case StatKind::kError:
      w.value(t.text(v));
      break;
    case StatKind::kText:
      w.raw_value(t.text(v));
      break;  // already canonical JSON
  }
}

class JsonReport {
 public:
  explicit JsonReport(const DiffView& view)
      : a_(view.a), b_(view.b), names_(view.names), result_(view.result) {}

  std::string render() const {
    std::string o;
    json::Writer w(o);
    w.begin_object().field("equal", result_.equal());
    w.key("a");
    write_file(w, a_);
    w.key("b");
    write_file(w, b_);
    write_tolerances(w);
    w.key("largest_noise_ratio");
    if (result_.largest_noise) {
      write_value_diff(w, *result_.largest_noise, true);
    } else {
      w.value(nullptr);
    }
    w.field("names_mismatch", result_.names_mismatch);
    write_closest_names(w);
    w.key("totals").begin_object();
    w.field("matched_records", result_.matched_records)
        .field("divergent_records", result_.divergent_records)
        .field("values_compared", result_.values_compared)
        .field("divergent_values", result_.divergent_values)
        .field("only_in_a", result_.only_in_a_count)
        .field("only_in_b", result_.only_in_b_count);
    w.end_object().key("first_divergence");
    if (result_.first_divergent_record) {
      write_record_diffs(w, result_.first_divergence);
    } else {
      w.value(nullptr);
    }
    w.key("next_divergences").begin_array();
    for (const auto& rec : result_.next_divergences) write_record_diffs(w, rec.stats);
    w.end_array().key("worst").begin_array();
    for (const auto& d : result_.worst) write_value_diff(w, d, true);
    w.end_array().key("only_in_a");
    write_records(w, a_, result_.only_in_a);
    w.key("only_in_b");
    write_records(w, b_, result_.only_in_b);
    write_stats(w);
    w.end_object();
    o += '\n';
    return o;
  }

 private:
  void write_tolerances(json::Writer& w) const {
    w.key("tolerances").begin_array();
    for (const auto& t : result_.tolerances) {
      w.begin_object()
          .field("dtype", t.dtype)
          .field("rtol", t.tolerance.rtol)
          .field("atol", t.tolerance.atol)
          .field("extreme_rtol", t.extreme_rtol)
          .field("records", t.records)
          .end_object();
    }
    w.end_array().key("dtype_mismatch").begin_array();
    for (const auto& m : result_.dtype_mismatches) {
      w.begin_object()
          .field("a", m.a)
          .field("b", m.b)
          .field("noise_dtype", m.noise_dtype)
          .field("noise", m.noise)
          .field("records", m.records)
          .end_object();
    }
    w.end_array();
  }

  void write_closest_names(json::Writer& w) const {
    w.key("closest_names").begin_array();
    for (const auto& s : result_.closest_names) {
      w.begin_object()
          .field("a", names_.name(s.a_module))
          .field("b", names_.name(s.b_module))
          .field("a_records", s.a_records)
          .field("hint", s.hint)
          .end_object();
    }
    w.end_array();
  }

  void write_stats(json::Writer& w) const {
    w.key("stats").begin_array();
    for (const auto& s : result_.stats) {
      w.begin_object()
          .field("stat", names_.name(s.name))
          .field("exact", s.exact)
          .field("compared", s.compared)
          .field("divergent", s.divergent)
          .field("max_rel_error", s.max_rel_error)
          .field("only_in_a", s.only_in_a)
          .field("only_in_b", s.only_in_b)
          .field("failed_both", s.failed_both)
          .field("dtype_metadata", s.dtype_metadata)
          .end_object();
    }
    w.end_array();
  }

  static void write_file(json::Writer& w, const ActivationTrace& t) {
    w.begin_object()
        .field("path", t.path)
        .field("records", t.records.size())
        .field("dropped", t.dropped)
        .end_object();
  }

  // NaN marks a measure that does not apply (no numbers on both sides, or no
  // dtype difference): null, not the "NaN" a real NaN value would be.
  static void number_or_null(json::Writer& w, double v) {
    if (std::isnan(v)) {
      w.value(nullptr);
    } else {
      w.value(v);
    }
  }

  void write_key(json::Writer& w, const ActivationRecord& r) const {
    w.field("module", names_.name(r.module)).field("tensor", names_.name(r.tensor)).key("step");
    if (r.step == kNoStep) {
      w.value(nullptr);
    } else {
      w.value(r.step);
    }
    w.field("occurrence", r.occurrence);
  }

  void write_value_diff(json::Writer& w, const ValueDiff& d, bool with_key) const {
    const auto& ra = a_.records[d.a_record];
    const auto& rb = b_.records[d.b_record];
    w.begin_object();
    if (with_key) write_key(w, ra);
    const auto& va = a_.stats[d.a_stat];
    w.field("stat", names_.name(va.name)).key("a");
    write_value(w, a_, va);
    w.key("b");
    write_value(w, b_, b_.stats[d.b_stat]);
    w.key("abs_error");
    number_or_null(w, d.abs_error);
    w.field("rel_error", d.rel_error).key("scale");
    number_or_null(w, d.scale);
    w.field("tensor_scale", d.tensor_scale).key("noise_ratio");
    number_or_null(w, d.noise_ratio);
    if (!std::isnan(d.noise_ratio)) {
      w.field("noise_dtype", d.noise_dtype).field("verdict", noise_verdict(d.noise_ratio));
    }
    w.field("a_line", ra.line).field("b_line", rb.line).end_object();
  }

  void write_record_diffs(json::Writer& w, const std::vector<ValueDiff>& diffs) const {
    const auto& ra = a_.records[diffs.front().a_record];
    const auto& rb = b_.records[diffs.front().b_record];
    w.begin_object();
    write_key(w, ra);
    w.field("a_line", ra.line).field("b_line", rb.line).key("noise_ratio");
    const ValueDiff* noisy = noisiest(diffs);
    if (noisy == nullptr) {
      w.value(nullptr);
    } else {
      w.value(noisy->noise_ratio);
    }
    w.key("stats").begin_array();
    for (const auto& d : diffs) write_value_diff(w, d, false);
    w.end_array().end_object();
  }

  void write_records(json::Writer& w, const ActivationTrace& t,
                     const std::vector<std::uint32_t>& records) const {
    w.begin_array();
    for (auto i : records) {
      const auto& r = t.records[i];
      w.begin_object();
      write_key(w, r);
      w.field("line", r.line).end_object();
    }
    w.end_array();
  }

  const ActivationTrace& a_;
  const ActivationTrace& b_;
  const NamePool& names_;
  const DiffResult& result_;
};

}  // namespace

std::string diff_json(const DiffView& view) {
  return JsonReport(view).render();
}

}  // namespace regiontrace::cli
