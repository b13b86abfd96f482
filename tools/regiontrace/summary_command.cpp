// `regiontrace summary trace.json.gz`: the top region spans and ops of a
// Chrome trace by total and self time, as tables or (--json) one object.
#include <algorithm>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "command.hpp"
#include "region_spelling.hpp"
#include "summary_output.hpp"
#include "text_table.hpp"
#include "trace_spans.hpp"
#include "trace_summary.hpp"

namespace regiontrace::cli {
namespace {

struct SummaryArguments {
  std::string path;
  std::size_t top = 20;
  std::string sort;  // "self", "total", or empty: ops by self, regions by total
  bool json = false;
  SummaryOptions options;
};

void order(std::vector<SpanTotals>& rows, bool by_self) {
  std::sort(rows.begin(), rows.end(), [by_self](const SpanTotals& a, const SpanTotals& b) {
    const double x = by_self ? a.self_us : a.total_us;
    const double y = by_self ? b.self_us : b.total_us;
    if (x != y) return x > y;
    return a.name < b.name;
  });
}

// --inside by another spelling (a catalog short name for the trace's full
// one, or the reverse), tried only when the name as given failed.
std::vector<std::string> inside_by_other_spelling(const TraceSpans& spans, TraceSummary& s,
                                                  const std::string& inside) {
  std::vector<std::string> tried;
  for (const std::string& other : catalog_spellings(inside)) {
    const bool is_path = other.find('/') != std::string::npos;
    if (is_path || std::binary_search(s.region_names.begin(), s.region_names.end(), other)) {
      s.inside = inside_totals(spans, other);
      if (s.inside) return {};
    }
    tried.push_back(other);
  }
  return tried;
}

int no_such_region(const SummaryArguments& args, const TraceSummary& s,
                   const std::vector<std::string>& tried) {
  std::string known;
  for (const auto& name : s.region_names) {
    known += (known.empty() ? "" : ", ") + terminal_text(name);
  }
  std::cerr << "regiontrace summary: --inside " << args.options.inside;
  for (const auto& other : tried) std::cerr << " (or " << other << ")";
  std::cerr << ": " << args.path << " has no region span with that name or path (its regions: "
            << (known.empty() ? "none" : known) << ")\n";
  return kExitUsage;
}

int run_summary(const SummaryArguments& args) {
  // Read once, one event at a time: memory follows the spans, not the file.
  const TraceSpans spans = read_trace_spans(args.path);
  TraceSummary s = summarize_spans(spans, args.options);
  // Said first, and on standard error: the numbers below are of a part of the run.
  if (!s.unfinished.empty()) std::cerr << "regiontrace summary: " << s.unfinished << "\n";
  if (!args.options.inside.empty() && !s.inside) {
    const std::vector<std::string> tried = inside_by_other_spelling(spans, s, args.options.inside);
    if (!s.inside) return no_such_region(args, s, tried);
  }
  for (auto& st : s.steps) order(st.regions, false);
  if (s.inside) order(s.inside->ops, true);
  const bool ops_by_self = args.sort != "total";
  order(s.regions, args.sort == "self");
  order(s.ops, ops_by_self);
  order(s.gpu, ops_by_self);
  const SummaryView view{args.path, args.top, args.sort, args.options.by_step};
  if (args.json) {
    std::cout << summary_json(s, view);
  } else {
    print_summary_text(std::cout, s, view);
  }
  return kExitOk;
}

const CommandRegistration registration(50, [](CLI::App& app) -> Runner {
  auto args = std::make_shared<SummaryArguments>();
  CLI::App* cmd = app.add_subcommand(
      "summary", "Top region spans and ops of a Chrome trace (.json or .json.gz) by time");
  cmd->add_option("trace", args->path, "Chrome/Perfetto trace file")->required();
  cmd->add_option("--top", args->top, "Rows per table (0: all)")->capture_default_str();
  cmd->add_option("--sort", args->sort,
                  "Order every table by 'self' or 'total' time (default: ops by self, regions "
                  "by total)")
      ->check(CLI::IsMember({"self", "total"}));
  cmd->add_flag("--json", args->json, "Print one JSON object instead of tables");
  cmd->add_flag("--by-step", args->options.by_step,
                "Per step: wall time (its step span, else first to last region) and top regions; "
                "a span that crosses steps is split between them");
  cmd->add_option("--inside", args->options.inside,
                  "Ops that ran inside this region's spans (region name or catalog short name, "
                  "or path such as denoise/blocks.3), by self time");
  return [args] { return run_summary(*args); };
});

}  // namespace
}  // namespace regiontrace::cli
