#include "tree_report.hpp"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "regiontrace/sdk/json_writer.hpp"
#include "regiontrace/sdk/text_format.hpp"
#include "regiontrace/sdk/text_table.hpp"

namespace regiontrace::nvtx_record {
namespace {

namespace json = regiontrace::json;

std::string domain_label(const std::string& domain) {
  return domain.empty() ? "(NVTX default domain)" : "\"" + domain + "\"";
}

void append_rows(sdk::text::Table& table, const RangeNode& node, std::size_t indent) {
  for (const auto& c : node.children) {
    const std::string label = std::string(indent, ' ') + (c->is_mark ? "* " : "") + c->name;
    if (c->is_mark) {
      table.add_run_on_row({label, std::to_string(c->count), "mark"});
      continue;
    }
    std::vector<std::string> cells = {
        label,
        std::to_string(c->count),
        sdk::text::duration(c->total_ns),
        sdk::text::duration(c->total_ns / static_cast<std::int64_t>(c->count)),
        sdk::text::duration(c->min_ns),
        sdk::text::duration(c->max_ns)};
    if (c->open != 0) {
      cells.push_back("(" + std::to_string(c->open) + " still open at exit)");
      table.add_run_on_row(std::move(cells));
    } else {
      table.add_row(std::move(cells));
    }
    append_rows(table, *c, indent + 2);
  }
}

void append_table(std::string& out, const std::string& title, const RangeNode& root) {
  using Align = sdk::text::Table::Align;
  sdk::text::Table table;
  table.add_column({"range", Align::kLeft, 5}).add_column({"count", Align::kRight, 8});
  for (const char* h : {"total", "avg", "min", "max"}) table.add_column({h, Align::kRight, 10});
  table.add_column({""});  // where a range still open at exit says so
  append_rows(table, root, 0);
  out += title + "\n";
  out += table.text();
}

void write_children(json::Writer& w, const RangeNode& parent);

// One Writer per node: a Writer tracks at most 64 levels, and ranges can nest
// deeper than that (a recursive function with a range per call).
std::string node_json(const RangeNode& n) {
  std::string out;
  json::Writer w(out);
  w.begin_object().field("name", n.name).field("kind", n.is_mark ? "mark" : "range");
  w.field("count", n.count);
  if (!n.is_mark) {
    w.field("open", n.open)
        .field("total_ns", n.total_ns)
        .field("avg_ns", n.count ? n.total_ns / static_cast<std::int64_t>(n.count) : 0)
        .field("min_ns", n.count ? n.min_ns : 0)
        .field("max_ns", n.max_ns);
  }
  w.key("children");
  write_children(w, n);
  w.end_object();
  return out;
}

void write_children(json::Writer& w, const RangeNode& parent) {
  w.begin_array();
  for (const auto& c : parent.children) w.raw_value(node_json(*c));
  w.end_array();
}

}  // namespace

std::string text_report(const RangeForest& forest) {
  std::string out;
  if (forest.processes.empty()) {
    out +=
        "no NVTX ranges or marks were recorded. Is the program using NVTX, with a sink that "
        "emits it switched on (e.g. REGIONTRACE_SINKS=nvtx or FASTVIDEO_NVTX_PROFILE=1)?\n";
  }
  for (const ProcessTree& p : forest.processes) {
    for (const ThreadTree& t : p.threads) {
      for (const DomainTree& d : t.domains) {
        std::string title = "process " + std::to_string(p.pid) + ", thread " +
                            std::to_string(t.tid) + (t.name.empty() ? "" : " (" + t.name + ")") +
                            ", domain " + domain_label(d.domain);
        append_table(out, title, d.root);
        if (d.unmatched_pops != 0) {
          out += "  warning: " + std::to_string(d.unmatched_pops) +
                 " pop(s) with no range open on this thread\n";
        }
        out += '\n';
      }
    }
    for (const auto& [domain, root] : p.start_end_ranges) {
      append_table(
          out,
          "process " + std::to_string(p.pid) + ", start/end ranges, domain " + domain_label(domain),
          root);
      out += '\n';
    }
  }
  if (forest.malformed_lines != 0) {
    out += "note: " + std::to_string(forest.malformed_lines) +
           " record line(s) could not be read (a process killed while writing?)\n";
  }
  return out;
}

std::string json_report(const RangeForest& forest) {
  std::string out;
  json::Writer w(out);
  w.begin_object().key("processes").begin_array();
  for (const ProcessTree& p : forest.processes) {
    w.begin_object().field("pid", p.pid).key("threads").begin_array();
    for (const ThreadTree& t : p.threads) {
      w.begin_object().field("tid", t.tid).field("name", t.name).key("domains").begin_array();
      for (const DomainTree& d : t.domains) {
        w.begin_object().field("domain", d.domain).field("unmatched_pops", d.unmatched_pops);
        w.key("ranges");
        write_children(w, d.root);
        w.end_object();
      }
      w.end_array().end_object();
    }
    w.end_array().key("start_end_ranges").begin_array();
    for (const auto& [domain, root] : p.start_end_ranges) {
      w.begin_object().field("domain", domain).key("ranges");
      write_children(w, root);
      w.end_object();
    }
    w.end_array().end_object();
  }
  w.end_array().field("malformed_lines", forest.malformed_lines).end_object();
  out += '\n';
  return out;
}

}  // namespace regiontrace::nvtx_record
