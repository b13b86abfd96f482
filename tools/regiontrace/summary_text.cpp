#include <algorithm>
#include <functional>
#include <ostream>

#include "regiontrace/sdk/text_format.hpp"
#include "regiontrace/sdk/trace_time.hpp"
#include "summary_output.hpp"
#include "text_table.hpp"

namespace regiontrace::cli {
namespace {

// "a 12.300 ms, b 4.100 ms" for the largest regions of a step.
std::string top_regions(const std::vector<SpanTotals>& rows, std::size_t top);

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
    table.add_row({r.name, std::to_string(r.calls), fixed(sdk::units::us_to_ms(r.total_us), 3),
                   fixed(sdk::units::us_to_ms(r.self_us), 3), fixed(percent(r), 1),
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
        {std::to_string(st.step), fixed(sdk::units::us_to_ms(st.wall_us), 3),
         st.from_step_span ? "step span" : "regions",
         top_regions(st.regions, top == 0 ? st.regions.size() : std::min<std::size_t>(top, 5))});
  }
  table.print(out);
}

std::string top_regions(const std::vector<SpanTotals>& rows, std::size_t top) {
  std::string text;
  for (std::size_t i = 0; i < rows.size() && i < top; ++i) {
    if (i > 0) text += ", ";
    text += rows[i].name + " " + fixed(sdk::units::us_to_ms(rows[i].total_us), 3);
  }
  return text;
}

void print_inside(std::ostream& out, const SummaryView& args, const InsideTotals& inside) {
  const double region_us = inside.region_total_us;
  const std::string title = "Ops inside region " + inside.region + " (" +
                            std::to_string(inside.region_spans) + " spans, " +
                            fixed(sdk::units::us_to_ms(region_us), 3) + " ms)";
  if (inside.ops.empty()) out << "\n" << title << ": none\n";
  print_table(out, title.c_str(), "op", inside.ops, true, args.top, "%_of_region",
              [region_us](const SpanTotals& r) {
                return region_us > 0 ? 100 * r.self_us / region_us : 0.0;
              });
}

}  // namespace

void print_summary_text(std::ostream& out, const TraceSummary& s, const SummaryView& args) {
  const bool ops_by_self = args.sort != "total";
  const double wall_us = s.wall_us;
  out << "Trace: " << args.path << "\n  " << s.events << " events, " << s.spans << " spans on "
      << s.threads << (s.threads == 1 ? " thread" : " threads") << " of " << s.processes
      << (s.processes == 1 ? " process, " : " processes, ")
      << fixed(sdk::units::us_to_ms(wall_us), 3) << " ms from first to last event\n";
  if (s.unmatched > 0) out << "  " << s.unmatched << " unmatched B/E events ignored\n";
  if (s.spans == 0) out << "  no spans (ph X or B/E) in this trace\n";
  // A region's share of the whole trace's wall time (regions nest, so these
  // do not add up to 100).
  print_table(
      out, "Region spans", "region", s.regions, args.sort == "self", args.top, "%_of_trace",
      [wall_us](const SpanTotals& r) { return wall_us > 0 ? 100 * r.total_us / wall_us : 0.0; });
  print_table(out, "Ops", "op", s.ops, ops_by_self, args.top, "self_%", self_share(s.ops));
  print_table(out, "GPU", "kernel", s.gpu, ops_by_self, args.top, "self_%", self_share(s.gpu));
  if (args.by_step) print_steps(out, s.steps, args.top);
  if (s.inside) print_inside(out, args, *s.inside);
}

}  // namespace regiontrace::cli
