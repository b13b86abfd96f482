// `regiontrace diff PORT.jsonl REFERENCE.jsonl`: finds the first layer where two
// activation traces diverge (see activation_diff.hpp for the comparison and
// docs/cli.md for the report). Exit 0 equal within tolerance, 1 divergent or
// records missing on a side, 2 bad arguments, input that is not an
// activation trace, or files whose module names mostly do not match.
#include <simdjson.h>

#include <exception>
#include <iostream>
#include <memory>
#include <thread>

#include "activation_diff.hpp"
#include "activation_records.hpp"
#include "command.hpp"
#include "diff_output.hpp"
#include "list_option.hpp"
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
  const DiffView view{a, b, names, result};
  if (args.json) {
    std::cout << diff_json(view);
  } else {
    print_diff_text(std::cout, view);
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
