// `regiontrace summary trace.json.gz`: the top region spans and ops of a
// Chrome trace by total and self time, as tables or (--json) one object.
#include <algorithm>
#include <cstdio>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "command.hpp"
#include "region_spelling.hpp"
#include "regiontrace/sdk/json_writer.hpp"
#include "regiontrace/sdk/text_format.hpp"
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

// "a 12.300 ms, b 4.100 ms" for the largest regions of a step.
std::string top_regions(const std::vector<SpanTotals>& rows, std::size_t top);

void order(std::vector<SpanTotals>& rows, bool by_self) {
  std::sort(rows.begin(), rows.end(), [by_self](const SpanTotals& a, const SpanTotals& b) {
    const double x = by_self ? a.self_us : a.total_us;
    const double y = by_self ? b.self_us : b.total_us;
    if (x != y) return x > y;
    return a.name < b.name;
  });
}

using sdk::text::fixed;

double sum_self(const std::vector<SpanTotals>& rows) {
  double sum = 0;
  for (const auto& r : rows) sum += r.self_us;
  return sum;
}

// `percent` gives each row's share for the percentage column.
void print_table(std::ostream& out, const char* title, const char* first_column,
                 const std::vector<SpanTotals>& rows, bool by_self, std::size_t top,
                 const char* percent_label,
                 const std::function<double(const SpanTotals&)>& percent) {
  if (rows.empty()) return;
  const std::size_t shown = top == 0 ? rows.size() : std::min(top, rows.size());
  out << "\n" << title << " (by " << (by_self ? "self" : "total") << " time";
  if (shown < rows.size()) out << ", top " << shown << " of " << rows.size();
  out << "):\n";
  using A = TextTable::Align;
  TextTable table(
      {first_column, "calls", "total_ms", "self_ms", percent_label, "avg_us", "min_us", "max_us"},
      {A::kLeft, A::kRight, A::kRight, A::kRight, A::kRight, A::kRight, A::kRight, A::kRight});
  for (std::size_t i = 0; i < shown; ++i) {
    const auto& r = rows[i];
    table.add_row({r.name, std::to_string(r.calls), fixed(r.total_us / 1000, 3),
                   fixed(r.self_us / 1000, 3), fixed(percent(r), 1),
                   fixed(r.total_us / static_cast<double>(r.calls), 1), fixed(r.min_us, 1),
                   fixed(r.max_us, 1)});
  }
  table.print(out);
}

// Share of the summed self time of all rows: where the thread's time went.
std::function<double(const SpanTotals&)> self_share(const std::vector<SpanTotals>& rows) {
  const double sum = sum_self(rows);
  return [sum](const SpanTotals& r) { return sum > 0 ? 100 * r.self_us / sum : 0.0; };
}

void write_rows(json::Writer& w, const std::vector<SpanTotals>& rows, std::size_t top) {
  const std::size_t shown = top == 0 ? rows.size() : std::min(top, rows.size());
  w.begin_array();
  for (std::size_t i = 0; i < shown; ++i) {
    const auto& r = rows[i];
    w.begin_object()
        .field("name", r.name)
        .field("category", r.category)
        .field("calls", r.calls)
        .field("total_us", r.total_us)
        .field("self_us", r.self_us)
        .field("avg_us", r.total_us / static_cast<double>(r.calls))
        .field("min_us", r.min_us)
        .field("max_us", r.max_us)
        .end_object();
  }
  w.end_array();
}

void write_steps(json::Writer& w, const std::vector<StepTotals>& steps, std::size_t top) {
  w.begin_array();
  for (const StepTotals& step : steps) {
    w.begin_object()
        .field("step", step.step)
        .field("wall_us", step.wall_us)
        .field("wall_from", step.from_step_span ? "step span" : "region spans")
        .key("regions");
    write_rows(w, step.regions, top);
    w.end_object();
  }
  w.end_array();
}

void print_steps(std::ostream& out, const std::vector<StepTotals>& steps, std::size_t top) {
  out << "\nSteps (wall time, and the regions with the most total time):\n";
  if (steps.empty()) {
    out << "  no steps: no region span carries args.step and there are no step spans\n";
    return;
  }
  using A = TextTable::Align;
  TextTable table({"step", "wall_ms", "from", "top regions (total ms)"},
                  {A::kRight, A::kRight, A::kLeft, A::kLeft});
  for (const auto& st : steps) {
    table.add_row(
        {std::to_string(st.step), fixed(st.wall_us / 1000, 3),
         st.from_step_span ? "step span" : "regions",
         top_regions(st.regions, top == 0 ? st.regions.size() : std::min<std::size_t>(top, 5))});
  }
  table.print(out);
}

std::string top_regions(const std::vector<SpanTotals>& rows, std::size_t top) {
  std::string text;
  for (std::size_t i = 0; i < rows.size() && i < top; ++i) {
    if (i > 0) text += ", ";
    text += rows[i].name + " " + fixed(rows[i].total_us / 1000, 3);
  }
  return text;
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

void print_json(const SummaryArguments& args, const TraceSummary& s) {
  std::string o;
  json::Writer w(o);
  w.begin_object()
      .field("trace", args.path)
      .field("incomplete", !s.unfinished.empty())
      .field("events", s.events)
      .field("spans", s.spans)
      .field("processes", s.processes)
      .field("threads", s.threads)
      .field("unmatched", s.unmatched)
      .field("wall_us", s.wall_us)
      .key("regions");
  write_rows(w, s.regions, args.top);
  w.key("ops");
  write_rows(w, s.ops, args.top);
  w.key("gpu");
  write_rows(w, s.gpu, args.top);
  if (args.options.by_step) {
    w.key("steps");
    write_steps(w, s.steps, args.top);
  }
  if (s.inside) {
    w.key("inside")
        .begin_object()
        .field("region", s.inside->region)
        .field("region_spans", s.inside->region_spans)
        .field("region_total_us", s.inside->region_total_us)
        .key("ops");
    write_rows(w, s.inside->ops, args.top);
    w.end_object();
  }
  w.end_object();
  o += '\n';
  std::cout << o;
}

void print_inside(const SummaryArguments& args, const InsideTotals& inside) {
  const double region_us = inside.region_total_us;
  const std::string title = "Ops inside region " + inside.region + " (" +
                            std::to_string(inside.region_spans) + " spans, " +
                            fixed(region_us / 1000, 3) + " ms)";
  if (inside.ops.empty()) std::cout << "\n" << title << ": none\n";
  print_table(std::cout, title.c_str(), "op", inside.ops, true, args.top, "%_of_region",
              [region_us](const SpanTotals& r) {
                return region_us > 0 ? 100 * r.self_us / region_us : 0.0;
              });
}

void print_text(const SummaryArguments& args, const TraceSummary& s) {
  const bool ops_by_self = args.sort != "total";
  const double wall_us = s.wall_us;
  std::cout << "Trace: " << args.path << "\n  " << s.events << " events, " << s.spans
            << " spans on " << s.threads << (s.threads == 1 ? " thread" : " threads") << " of "
            << s.processes << (s.processes == 1 ? " process, " : " processes, ")
            << fixed(wall_us / 1000, 3) << " ms from first to last event\n";
  if (s.unmatched > 0) std::cout << "  " << s.unmatched << " unmatched B/E events ignored\n";
  if (s.spans == 0) std::cout << "  no spans (ph X or B/E) in this trace\n";
  // A region's share of the whole trace's wall time (regions nest, so these
  // do not add up to 100).
  print_table(
      std::cout, "Region spans", "region", s.regions, args.sort == "self", args.top, "%_of_trace",
      [wall_us](const SpanTotals& r) { return wall_us > 0 ? 100 * r.total_us / wall_us : 0.0; });
  print_table(std::cout, "Ops", "op", s.ops, ops_by_self, args.top, "self_%", self_share(s.ops));
  print_table(std::cout, "GPU", "kernel", s.gpu, ops_by_self, args.top, "self_%",
              self_share(s.gpu));
  if (args.options.by_step) print_steps(std::cout, s.steps, args.top);
  if (s.inside) print_inside(args, *s.inside);
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
  if (args.json) {
    print_json(args, s);
  } else {
    print_text(args, s);
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
