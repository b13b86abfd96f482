#include "region_summary.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>

#include "memory_record_json.hpp"
#include "regiontrace/sdk/json_writer.hpp"
#include "regiontrace/sdk/text_format.hpp"
#include "regiontrace/sdk/text_table.hpp"

namespace regiontrace::memory {

void RegionSummary::add(const RegionRecord& r) {
  const ClosedRegion& f = r.figures;
  if (static_cast<std::size_t>(f.path) >= paths_.size()) paths_.resize(f.path + 1);
  PathStats& p = paths_[static_cast<std::size_t>(f.path)];
  ++records_;
  if (f.stood_aside) {
    ++stood_aside_;
    ++p.stood_aside;
  }
  if (f.unmeasured) ++p.unmeasured;
  ++p.calls;
  p.total_ns += r.end_ns - f.start_ns;
  if (r.unwinding) ++p.unwound;
  p.held_bytes = r.held_bytes;
  f.devices.for_each([&](const DeviceFigures& figures) {
    const int d = figures.device;
    p.devices |= 1u << d;
    const std::int64_t growth = figures.exit - figures.entry;
    if (!p.growth[d].set || growth > p.growth[d].bytes) p.growth[d] = {true, growth, f.step};
    const std::int64_t added = figures.peak - figures.entry;
    if (!p.added_peak[d].set || added > p.added_peak[d].bytes) {
      p.added_peak[d] = {true, added, f.step};
    }
    if (!p.peak[d].set || figures.peak > p.peak[d].bytes) p.peak[d] = {true, figures.peak, f.step};
  });
  // Leak detection needs steps: instances outside any step are not points.
  if (f.step != kNoStep) p.held.add(f.step, r.held_bytes);
}

std::vector<RegionSummary::Suspect> RegionSummary::leak_suspects(
    const LeakCriteria& criteria) const {
  std::vector<Suspect> out;
  for (std::size_t i = 0; i < paths_.size(); ++i) {
    if (i == RegionPaths::kOutside || i == RegionPaths::kOverflow) continue;
    const LeakVerdict v = evaluate_leak(paths_[i].held.points(), criteria);
    if (v.suspect) out.push_back({static_cast<int>(i), v});
  }
  std::sort(out.begin(), out.end(), [](const Suspect& a, const Suspect& b) {
    return a.verdict.growth_bytes > b.verdict.growth_bytes;
  });
  return out;
}

namespace {

// "stood aside: <why>", or null when the sink never stood aside.
void append_why(json::Writer& w, bool stood_aside, const std::string& why) {
  if (!stood_aside) {
    w.value(nullptr);
    return;
  }
  w.value("stood aside: " +
          (why.empty() ? std::string("another profiler held libtorch's memory slot") : why));
}

}  // namespace

std::string RegionSummary::to_json(const RegionPaths& paths, const RunTotals& totals,
                                   const LeakCriteria& criteria, bool tracked) const {
  std::string out;
  json::Writer w(out);
  w.begin_object()
      .field("rank", totals.rank)
      .field("pid", totals.pid)
      .field("world_size", totals.world_size);
  w.key("records")
      .begin_object()
      .field("written", records_)
      .field("dropped", totals.dropped_records)
      .field("stood_aside", stood_aside_)
      .key("stood_aside_why");
  append_why(w, stood_aside_ > 0, totals.stood_aside_why);
  w.end_object();
  w.key("tracking").raw_value(formatted(append_tracking, totals.tracking));
  w.key("resident")
      .begin_object()
      .key("rss_bytes")
      .raw_value(formatted(append_optional, totals.resident.rss_bytes))
      .key("hwm_bytes")
      .raw_value(formatted(append_optional, totals.resident.hwm_bytes))
      .end_object();
  w.key("devices").raw_value(
      "{" + formatted(append_allocated_by_device, totals.devices, totals.allocated) + "}");
  w.field("paths_overflowed", totals.paths_overflowed);
  w.key("snapshots");
  append_snapshots(w, totals.snapshots_skipped);
  w.key("regions");
  append_regions(w, paths, totals);
  w.key("leak_detection")
      .begin_object()
      .field("method", tracked ? "tracked" : "net")
      .field("min_steps", criteria.min_steps)
      .field("min_bytes", criteria.min_bytes)
      .end_object();
  w.key("leak_suspects");
  append_suspects(w, paths, criteria);
  w.end_object();
  out += '\n';
  return out;
}

void RegionSummary::append_snapshots(json::Writer& w, std::int64_t skipped) const {
  w.begin_object().key("written").begin_array();
  for (const SnapshotNote& s : snapshots_) {
    w.begin_object()
        .field("file", s.file)
        .field("trigger", s.trigger)
        .field("reason", s.reason)
        .key("step")
        .raw_value(formatted(append_step, s.step))
        .end_object();
  }
  w.end_array().field("skipped", skipped).end_object();
}

void RegionSummary::append_regions(json::Writer& w, const RegionPaths& paths,
                                   const RunTotals& totals) const {
  w.begin_array();
  // One region a line: each is written apart and starts with the newline
  // that follows the comma the writer puts between them.
  std::string region;
  bool first = true;
  for (std::size_t i = 0; i < paths_.size(); ++i) {
    const PathStats& p = paths_[i];
    if (p.calls == 0) continue;
    region.assign(first ? "" : "\n");
    first = false;
    json::Writer r(region);
    r.begin_object()
        .field("path", paths.path(static_cast<int>(i)))
        .field("name", paths.name(static_cast<int>(i)))
        .field("calls", p.calls)
        .field("unwound", p.unwound)
        .field("total_duration_ns", p.total_ns)
        .field("held_bytes", p.held_bytes)
        .field("stood_aside_calls", p.stood_aside);
    // Figures of calls measured only while another profiler took the events
    // would read as zeros: a path with nothing else says why instead.
    r.key("stood_aside");
    append_why(r, p.stood_aside > 0, totals.stood_aside_why);
    r.key("devices").begin_object();
    const std::uint32_t measured = p.unmeasured == p.calls ? 0u : p.devices;
    for_each_device(measured, [&](int d) {
      r.key(device_name(d))
          .begin_object()
          .field("largest_growth_bytes", p.growth[d].bytes)
          .key("largest_growth_step")
          .raw_value(formatted(append_step, p.growth[d].step))
          .field("largest_added_at_peak_bytes", p.added_peak[d].bytes)
          .key("largest_added_at_peak_step")
          .raw_value(formatted(append_step, p.added_peak[d].step))
          .field("highest_peak_bytes", p.peak[d].bytes)
          .key("highest_peak_step")
          .raw_value(formatted(append_step, p.peak[d].step))
          .end_object();
    });
    r.end_object().end_object();
    w.raw_value(region);
  }
  w.end_array();
}

void RegionSummary::append_suspects(json::Writer& w, const RegionPaths& paths,
                                    const LeakCriteria& criteria) const {
  const std::vector<Suspect> suspects = leak_suspects(criteria);
  w.begin_array();
  // One suspect a line, as the regions.
  std::string suspect;
  for (std::size_t i = 0; i < suspects.size(); ++i) {
    const Suspect& s = suspects[i];
    suspect.assign(i == 0 ? "" : "\n");
    json::Writer r(suspect);
    r.begin_object()
        .field("path", paths.path(s.path))
        .field("growth_bytes", s.verdict.growth_bytes)
        .key("per_step")
        .begin_array();
    for (const HeldPoint& point : paths_[static_cast<std::size_t>(s.path)].held.points()) {
      r.begin_object().field("step", point.step).field("held_bytes", point.held_bytes).end_object();
    }
    r.end_array().end_object();
    w.raw_value(suspect);
  }
  w.end_array();
}

std::string human_bytes(std::int64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(std::llabs(bytes));
  int u = 0;
  while (v >= 1024.0 && u < 4) {
    v /= 1024.0;
    ++u;
  }
  char buf[32];
  if (u == 0) {
    std::snprintf(buf, sizeof(buf), "%s%" PRId64 " B", bytes < 0 ? "-" : "", std::llabs(bytes));
  } else {
    std::snprintf(buf, sizeof(buf), "%s%.1f %s", bytes < 0 ? "-" : "", v, units[u]);
  }
  return buf;
}

std::string RegionSummary::to_table(const RegionPaths& paths, const LeakCriteria& criteria,
                                    const std::string& stood_aside_why) const {
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < paths_.size(); ++i) {
    if (paths_[i].calls != 0) order.push_back(i);
  }
  // Most added first: the level at the peak counts everything allocated
  // before the region too (every block of a model shows the same level),
  // what the region added tells which one to look at.
  auto top_added = [&](std::size_t i) {
    std::int64_t best = 0;
    for (const Extreme& e : paths_[i].added_peak) best = std::max(best, e.bytes);
    return best;
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return top_added(a) > top_added(b); });
  using Align = sdk::text::Table::Align;
  sdk::text::Table table(1);
  table.add_column({"path", Align::kLeft, 0, 60})
      .add_column({"calls", Align::kRight, 8})
      .add_column({"device", Align::kLeft, 8})
      .add_column({"added at peak", Align::kRight, 14})
      .add_column({"added at exit", Align::kRight, 14})
      .add_column({"level at peak", Align::kRight, 14})
      .add_column({"held", Align::kRight, 12});
  const std::string why =
      "stood aside: " + (stood_aside_why.empty()
                             ? std::string("another profiler held libtorch's memory slot")
                             : stood_aside_why);
  bool some_partial = false;
  for (std::size_t i : order) {
    const PathStats& p = paths_[i];
    const std::string& path = paths.path(static_cast<int>(i));
    if (p.unmeasured == p.calls) {
      table.add_run_on_row({path, std::to_string(p.calls), why});
      continue;
    }
    some_partial = some_partial || p.stood_aside > 0;
    bool first = true;
    for_each_device(p.devices, [&](int d) {
      table.add_row({first ? path + (p.stood_aside > 0 ? "*" : "") : "",
                     first ? std::to_string(p.calls) : "", device_name(d),
                     human_bytes(p.added_peak[d].bytes), human_bytes(p.growth[d].bytes),
                     human_bytes(p.peak[d].bytes), first ? human_bytes(p.held_bytes) : ""});
      first = false;
    });
  }
  std::string out = table.text("");
  if (some_partial) out += "* some calls miss what another profiler took meanwhile; " + why + "\n";
  const std::vector<Suspect> suspects = leak_suspects(criteria);
  out += "leak suspects: ";
  if (suspects.empty()) out += "none";
  for (std::size_t i = 0; i < suspects.size(); ++i) {
    if (i != 0) out += ", ";
    out += sdk::text::terminal_text(paths.path(suspects[i].path)) + " (+" +
           human_bytes(suspects[i].verdict.growth_bytes) + ")";
  }
  out += '\n';
  return out;
}

}  // namespace regiontrace::memory
