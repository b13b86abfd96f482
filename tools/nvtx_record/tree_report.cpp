#include "tree_report.hpp"

#include <algorithm>
#include <cstdio>

#include "regiontrace/sdk/json_writer.hpp"

namespace regiontrace::nvtx_record {
namespace {

namespace json = regiontrace::json;

std::string domain_label(const std::string& domain) {
  return domain.empty() ? "(NVTX default domain)" : "\"" + domain + "\"";
}

std::size_t name_width(const RangeNode& node, std::size_t indent) {
  std::size_t w = 0;
  for (const auto& c : node.children) {
    w = std::max(w, indent + c->name.size() + (c->is_mark ? 2 : 0));
    w = std::max(w, name_width(*c, indent + 2));
  }
  return w;
}

std::string padded(std::string s, std::size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

std::string right(const std::string& s, std::size_t width) {
  return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}

void append_rows(std::string& out, const RangeNode& node, std::size_t indent, std::size_t width) {
  for (const auto& c : node.children) {
    const std::string label = std::string(indent, ' ') + (c->is_mark ? "* " : "") + c->name;
    out += "  " + padded(label, width);
    out += right(std::to_string(c->count), 8);
    if (c->is_mark) {
      out += "  mark\n";
      continue;
    }
    out += right(format_duration(c->total_ns), 12);
    out += right(format_duration(c->total_ns / static_cast<std::int64_t>(c->count)), 12);
    out += right(format_duration(c->min_ns), 12);
    out += right(format_duration(c->max_ns), 12);
    if (c->open != 0) out += "  (" + std::to_string(c->open) + " still open at exit)";
    out += '\n';
    append_rows(out, *c, indent + 2, width);
  }
}

void append_table(std::string& out, const std::string& title, const RangeNode& root) {
  const std::size_t width = std::max<std::size_t>(name_width(root, 0), 5) + 2;
  out += title + "\n";
  out += "  " + padded("range", width) + right("count", 8) + right("total", 12) + right("avg", 12) +
         right("min", 12) + right("max", 12) + "\n";
  append_rows(out, root, 0, width);
}

void append_node_json(std::string& out, const RangeNode& n) {
  out += "{\"name\":";
  json::append_escaped(out, n.name);
  out += n.is_mark ? ",\"kind\":\"mark\"" : ",\"kind\":\"range\"";
  out += ",\"count\":";
  json::append_uint(out, n.count);
  if (!n.is_mark) {
    out += ",\"open\":";
    json::append_uint(out, n.open);
    out += ",\"total_ns\":";
    json::append_int(out, n.total_ns);
    out += ",\"avg_ns\":";
    json::append_int(out, n.count ? n.total_ns / static_cast<std::int64_t>(n.count) : 0);
    out += ",\"min_ns\":";
    json::append_int(out, n.count ? n.min_ns : 0);
    out += ",\"max_ns\":";
    json::append_int(out, n.max_ns);
  }
  out += ",\"children\":[";
  for (std::size_t i = 0; i < n.children.size(); ++i) {
    if (i) out += ',';
    append_node_json(out, *n.children[i]);
  }
  out += "]}";
}

void append_children_json(std::string& out, const RangeNode& root) {
  out += '[';
  for (std::size_t i = 0; i < root.children.size(); ++i) {
    if (i) out += ',';
    append_node_json(out, *root.children[i]);
  }
  out += ']';
}

}  // namespace

std::string format_duration(std::int64_t ns) {
  char buf[32];
  if (ns < 1000) {
    std::snprintf(buf, sizeof(buf), "%lld ns", static_cast<long long>(ns));
  } else if (ns < 1000000) {
    std::snprintf(buf, sizeof(buf), "%.2f us", static_cast<double>(ns) / 1e3);
  } else if (ns < 1000000000) {
    std::snprintf(buf, sizeof(buf), "%.2f ms", static_cast<double>(ns) / 1e6);
  } else {
    std::snprintf(buf, sizeof(buf), "%.3f s", static_cast<double>(ns) / 1e9);
  }
  return buf;
}

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
  std::string out = "{\"processes\":[";
  for (std::size_t pi = 0; pi < forest.processes.size(); ++pi) {
    const ProcessTree& p = forest.processes[pi];
    if (pi) out += ',';
    out += "{\"pid\":";
    json::append_int(out, p.pid);
    out += ",\"threads\":[";
    for (std::size_t ti = 0; ti < p.threads.size(); ++ti) {
      const ThreadTree& t = p.threads[ti];
      if (ti) out += ',';
      out += "{\"tid\":";
      json::append_int(out, t.tid);
      out += ",\"name\":";
      json::append_escaped(out, t.name);
      out += ",\"domains\":[";
      for (std::size_t di = 0; di < t.domains.size(); ++di) {
        const DomainTree& d = t.domains[di];
        if (di) out += ',';
        out += "{\"domain\":";
        json::append_escaped(out, d.domain);
        out += ",\"unmatched_pops\":";
        json::append_uint(out, d.unmatched_pops);
        out += ",\"ranges\":";
        append_children_json(out, d.root);
        out += '}';
      }
      out += "]}";
    }
    out += "],\"start_end_ranges\":[";
    bool first = true;
    for (const auto& [domain, root] : p.start_end_ranges) {
      if (!first) out += ',';
      first = false;
      out += "{\"domain\":";
      json::append_escaped(out, domain);
      out += ",\"ranges\":";
      append_children_json(out, root);
      out += '}';
    }
    out += "]}";
  }
  out += "],\"malformed_lines\":";
  json::append_uint(out, forest.malformed_lines);
  out += "}\n";
  return out;
}

}  // namespace regiontrace::nvtx_record
