// `regiontrace diff PORT.jsonl REFERENCE.jsonl`: finds the first layer where two
// activation traces diverge (see activation_diff.hpp for the comparison and
// docs/cli.md for the report). Exit 0 equal within tolerance, 1 divergent or
// records missing on a side, 2 bad arguments, input that is not an
// activation trace, or files whose module names mostly do not match.
#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <iostream>
#include <memory>
#include <thread>

#include "activation_diff.hpp"
#include "activation_records.hpp"
#include "command.hpp"
#include "list_option.hpp"
#include "regiontrace/sdk/json_writer.hpp"
#include "text_table.hpp"

namespace regiontrace::cli {
namespace {

struct DiffArguments {
  std::string a_path;
  std::string b_path;
  DiffOptions options;
  NameRules names;
  bool json = false;
};

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

// The stat of a record pair furthest above its dtype noise; nullptr when the
// dtypes do not differ.
const ValueDiff* noisiest(const std::vector<ValueDiff>& stats) {
  const ValueDiff* best = nullptr;
  for (const auto& d : stats) {
    if (!std::isnan(d.noise_ratio) && (best == nullptr || d.noise_ratio > best->noise_ratio)) {
      best = &d;
    }
  }
  return best;
}

class TextReport {
 public:
  TextReport(const ActivationTrace& a, const ActivationTrace& b, const NamePool& names,
             const DiffArguments& args, const DiffResult& result)
      : a_(a), b_(b), names_(names), args_(args), result_(result) {}

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
  const DiffArguments& args_;
  const DiffResult& result_;
};

class JsonReport {
 public:
  JsonReport(const ActivationTrace& a, const ActivationTrace& b, const NamePool& names,
             const DiffArguments& args, const DiffResult& result)
      : a_(a), b_(b), names_(names), args_(args), result_(result) {}

  std::string render() const {
    std::string o;
    json::Writer w(o);
    w.begin_object().field("equal", result_.equal());
    w.key("a");
    write_file(w, a_);
    w.key("b");
    write_file(w, b_);
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
    w.end_array().key("largest_noise_ratio");
    if (result_.largest_noise) {
      write_value_diff(w, *result_.largest_noise, true);
    } else {
      w.value(nullptr);
    }
    w.field("names_mismatch", result_.names_mismatch);
    w.key("closest_names").begin_array();
    for (const auto& s : result_.closest_names) {
      w.begin_object()
          .field("a", names_.name(s.a_module))
          .field("b", names_.name(s.b_module))
          .field("a_records", s.a_records)
          .field("hint", s.hint)
          .end_object();
    }
    w.end_array().key("totals").begin_object();
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
    w.end_array().end_object();
    o += '\n';
    return o;
  }

 private:
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
  const DiffArguments& args_;
  const DiffResult& result_;
};

// The default tolerances, from the table the comparison uses: the docs are
// checked against this text (tests/docs/check_doc_snippets.py).
std::string dtype_help() {
  std::string text =
      "Compare every record with this dtype's tolerance instead of the records' own dtype. "
      "Default tolerances:";
  const char* sep = " ";
  for (const char* name : {"float32", "bfloat16", "float16", "float64"}) {
    const auto d = *tolerance_for_dtype(name);
    const bool fallback = std::string_view(d.name) == default_dtype_tolerance().name;
    text += sep + std::string(d.name) + (fallback ? " (and records without dtype)" : "") +
            " rtol=" + format_short(d.tolerance.rtol) + " atol=" + format_short(d.tolerance.atol);
    sep = "; ";
  }
  return text + "; two float dtypes: rtol=" + format_short(kNoiseTolerance) +
         "x the lower one's noise (min/max/absmax twice that)";
}

int run_diff(const DiffArguments& args) {
  // The two files load in parallel, each with its own names, then share A's.
  NamePool names;
  NamePool b_names;
  ActivationTrace a;
  ActivationTrace b;
  std::exception_ptr b_error;
  // simdjson picks its SIMD kernels on first use without a lock; pick them
  // here so the two loaders do not both write that choice at once.
  simdjson::get_active_implementation()->name();
  std::thread b_loader([&] {
    try {
      b = load_activation_trace(args.b_path, b_names);
    } catch (...) {
      b_error = std::current_exception();
    }
  });
  try {
    a = load_activation_trace(args.a_path, names);
  } catch (...) {
    b_loader.join();  // A's error is reported first
    throw;
  }
  b_loader.join();
  if (b_error) std::rethrow_exception(b_error);
  adopt_names(b, b_names, names);
  if (!args.names.empty()) {
    rename_modules(a, names, [&](const std::string& m) { return args.names.apply(m, true); });
    rename_modules(b, names, [&](const std::string& m) { return args.names.apply(m, false); });
  }
  DiffResult result;
  try {
    result = diff_traces(a, b, names, args.options);
  } catch (const std::invalid_argument& e) {
    std::cerr << "regiontrace diff: " << e.what() << "\n";
    return kExitUsage;
  }
  if (args.json) {
    std::cout << JsonReport(a, b, names, args, result).render();
  } else {
    TextReport(a, b, names, args, result).print(std::cout);
  }
  if (result.names_mismatch) return kExitUsage;  // nothing was compared: fix the names
  return result.equal() ? kExitOk : kExitFindings;
}

const CommandRegistration registration(30, [](CLI::App& app) -> Runner {
  auto args = std::make_shared<DiffArguments>();
  auto stats_text = std::make_shared<std::string>();
  auto strip_texts = std::make_shared<std::vector<std::string>>();
  auto map_texts = std::make_shared<std::vector<std::string>>();
  CLI::App* cmd = app.add_subcommand(
      "diff", "Compare two activation traces (JSONL) and find the first divergent layer");
  cmd->add_option("a", args->a_path,
                  "The trace checked (a port, a compiled run); its execution order is reported")
      ->required();
  cmd->add_option("b", args->b_path, "The reference trace")->required();
  // A glob that matched several files (a second run into the same folder)
  // gets an explanation rather than CLI11's "argument not expected".
  cmd->allow_extras();
  cmd->add_option("--rtol", args->options.rtol,
                  "Relative tolerance: |a-b| <= atol + rtol*max(|a|,|b|) (default: by dtype)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--atol", args->options.atol, "Absolute tolerance (default: by dtype)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--dtype", args->options.dtype, dtype_help());
  // One value per occurrence: a vector option that took more would swallow the files.
  cmd->add_option("--strip-prefix", *strip_texts,
                  "Remove PREFIX from module names before aligning: A=PREFIX or B=PREFIX for "
                  "one file, PREFIX for both (repeatable)")
      ->allow_extra_args(false);
  cmd->add_option("--map", *map_texts,
                  "Rename module name parts OLD to NEW (at dots) on both sides before aligning "
                  "(repeatable)")
      ->allow_extra_args(false);
  // A plain string split later: a CLI11 vector option would swallow the files.
  cmd->add_option("--stats", *stats_text,
                  "Compare only these statistics (comma separated; default: all on both sides)");
  cmd->add_option("--top", args->options.top,
                  "Rows in the next-divergences, worst-values and one-side tables (0: all)")
      ->capture_default_str();
  cmd->add_flag("--json", args->json, "Print the report as one JSON object");
  return [cmd, args, stats_text, strip_texts, map_texts] {
    if (const auto extra = cmd->remaining(); !extra.empty()) {
      std::cerr << "regiontrace diff: takes two traces (the one checked, then the reference), "
                << "got " << 2 + extra.size() << ": " << args->a_path << " " << args->b_path;
      for (const auto& path : extra) std::cerr << " " << path;
      std::cerr << "\n  a glob matched several files? Each run writes its own "
                   "activations_rank<r>_pid<p>.jsonl: name one file per side, or run into an "
                   "empty folder\n";
      return kExitUsage;
    }
    args->options.stats = split_list(*stats_text);
    for (const auto& text : *strip_texts) {
      if (text.rfind("A=", 0) == 0) {
        args->names.strip_a.push_back(text.substr(2));
      } else if (text.rfind("B=", 0) == 0) {
        args->names.strip_b.push_back(text.substr(2));
      } else {
        args->names.strip_a.push_back(text);
        args->names.strip_b.push_back(text);
      }
    }
    for (const auto& text : *map_texts) {
      const auto eq = text.find('=');
      if (eq == std::string::npos || eq == 0) {
        std::cerr << "regiontrace diff: --map " << text << ": expected OLD=NEW\n";
        return kExitUsage;
      }
      args->names.maps.emplace_back(text.substr(0, eq), text.substr(eq + 1));
    }
    return run_diff(*args);
  };
});

}  // namespace
}  // namespace regiontrace::cli
