#include "region_summary.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>

#include "record_format.hpp"
#include "regiontrace/sdk/json_writer.hpp"

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
void append_why(std::string& out, bool stood_aside, const std::string& why) {
  if (!stood_aside) {
    out += "null";
    return;
  }
  json::append_escaped(out, "stood aside: " + (why.empty() ? std::string("another profiler held "
                                                                         "libtorch's memory "
                                                                         "slot")
                                                           : why));
}

}  // namespace

std::string RegionSummary::to_json(const RegionPaths& paths, const RunTotals& totals,
                                   const LeakCriteria& criteria, bool tracked) const {
  std::string out = "{\"rank\":";
  json::append_int(out, totals.rank);
  out += ",\"pid\":";
  json::append_int(out, totals.pid);
  out += ",\"world_size\":";
  json::append_int(out, totals.world_size);
  out += ",\"records\":{\"written\":";
  json::append_int(out, records_);
  out += ",\"dropped\":";
  json::append_int(out, totals.dropped_records);
  out += ",\"stood_aside\":";
  json::append_int(out, stood_aside_);
  out += ",\"stood_aside_why\":";
  append_why(out, stood_aside_ > 0, totals.stood_aside_why);
  out += "},\"tracking\":";
  append_tracking(out, totals.tracking);
  out += ",\"resident\":{\"rss_bytes\":";
  append_optional(out, totals.resident.rss_bytes);
  out += ",\"hwm_bytes\":";
  append_optional(out, totals.resident.hwm_bytes);
  out += "},\"devices\":{";
  append_allocated_by_device(out, totals.devices, totals.allocated);
  out += "},\"paths_overflowed\":";
  out += totals.paths_overflowed ? "true" : "false";
  out += ",\"snapshots\":";
  append_snapshots(out, totals.snapshots_skipped);
  out += ",\"regions\":[";
  append_regions(out, paths, totals);
  out += "],\"leak_detection\":{\"method\":";
  out += tracked ? "\"tracked\"" : "\"net\"";
  out += ",\"min_steps\":";
  json::append_int(out, criteria.min_steps);
  out += ",\"min_bytes\":";
  json::append_int(out, criteria.min_bytes);
  out += "},\"leak_suspects\":[";
  append_suspects(out, paths, criteria);
  out += "]}\n";
  return out;
}

void RegionSummary::append_snapshots(std::string& out, std::int64_t skipped) const {
  out += "{\"written\":[";
  for (std::size_t i = 0; i < snapshots_.size(); ++i) {
    const SnapshotNote& s = snapshots_[i];
    if (i != 0) out += ',';
    out += "{\"file\":";
    json::append_escaped(out, s.file);
    out += ",\"trigger\":";
    json::append_escaped(out, s.trigger);
    out += ",\"reason\":";
    json::append_escaped(out, s.reason);
    out += ",\"step\":";
    append_step(out, s.step);
    out += '}';
  }
  out += "],\"skipped\":";
  json::append_int(out, skipped);
  out += '}';
}

void RegionSummary::append_regions(std::string& out, const RegionPaths& paths,
                                   const RunTotals& totals) const {
  bool first = true;
  for (std::size_t i = 0; i < paths_.size(); ++i) {
    const PathStats& p = paths_[i];
    if (p.calls == 0) continue;
    if (!first) out += ",\n";
    first = false;
    out += "{\"path\":";
    json::append_escaped(out, paths.path(static_cast<int>(i)));
    out += ",\"name\":";
    json::append_escaped(out, paths.name(static_cast<int>(i)));
    out += ",\"calls\":";
    json::append_int(out, p.calls);
    out += ",\"unwound\":";
    json::append_int(out, p.unwound);
    out += ",\"total_duration_ns\":";
    json::append_int(out, p.total_ns);
    out += ",\"held_bytes\":";
    json::append_int(out, p.held_bytes);
    out += ",\"stood_aside_calls\":";
    json::append_int(out, p.stood_aside);
    // Figures of calls measured only while another profiler took the events
    // would read as zeros: a path with nothing else says why instead.
    out += ",\"stood_aside\":";
    append_why(out, p.stood_aside > 0, totals.stood_aside_why);
    out += ",\"devices\":{";
    bool first_device = true;
    const std::uint32_t measured = p.unmeasured == p.calls ? 0u : p.devices;
    for_each_device(measured, [&](int d) {
      if (!first_device) out += ',';
      first_device = false;
      json::append_escaped(out, device_name(d));
      out += ":{\"largest_growth_bytes\":";
      json::append_int(out, p.growth[d].bytes);
      out += ",\"largest_growth_step\":";
      append_step(out, p.growth[d].step);
      out += ",\"highest_peak_bytes\":";
      json::append_int(out, p.peak[d].bytes);
      out += ",\"highest_peak_step\":";
      append_step(out, p.peak[d].step);
      out += '}';
    });
    out += "}}";
  }
}

void RegionSummary::append_suspects(std::string& out, const RegionPaths& paths,
                                    const LeakCriteria& criteria) const {
  const std::vector<Suspect> suspects = leak_suspects(criteria);
  for (std::size_t i = 0; i < suspects.size(); ++i) {
    const Suspect& s = suspects[i];
    if (i != 0) out += ",\n";
    out += "{\"path\":";
    json::append_escaped(out, paths.path(s.path));
    out += ",\"growth_bytes\":";
    json::append_int(out, s.verdict.growth_bytes);
    out += ",\"per_step\":[";
    const auto& points = paths_[static_cast<std::size_t>(s.path)].held.points();
    for (std::size_t k = 0; k < points.size(); ++k) {
      if (k != 0) out += ',';
      out += "{\"step\":";
      json::append_int(out, points[k].step);
      out += ",\"held_bytes\":";
      json::append_int(out, points[k].held_bytes);
      out += '}';
    }
    out += "]}";
  }
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
  std::int64_t max_path = 4;
  for (std::size_t i = 0; i < paths_.size(); ++i) {
    if (paths_[i].calls == 0) continue;
    order.push_back(i);
    max_path = std::max<std::int64_t>(
        max_path, static_cast<std::int64_t>(paths.path(static_cast<int>(i)).size()));
  }
  auto top_peak = [&](std::size_t i) {
    std::int64_t best = 0;
    for (const Extreme& e : paths_[i].peak) best = std::max(best, e.bytes);
    return best;
  };
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return top_peak(a) > top_peak(b); });
  const int width = static_cast<int>(std::min<std::int64_t>(max_path, 60));
  std::string out;
  char line[512];
  std::snprintf(line, sizeof(line), "%-*s %8s %-8s %12s %12s %12s\n", width, "path", "calls",
                "device", "peak", "max growth", "held");
  out += line;
  const std::string why =
      "stood aside: " + (stood_aside_why.empty()
                             ? std::string("another profiler held libtorch's memory slot")
                             : stood_aside_why);
  bool some_partial = false;
  for (std::size_t i : order) {
    const PathStats& p = paths_[i];
    if (p.unmeasured == p.calls) {
      const std::string& name = paths.path(static_cast<int>(i));
      std::snprintf(line, sizeof(line), "%-*s %8s %s\n", width, name.c_str(),
                    std::to_string(p.calls).c_str(), why.c_str());
      out += line;
      continue;
    }
    some_partial = some_partial || p.stood_aside > 0;
    const std::string name = paths.path(static_cast<int>(i)) + (p.stood_aside > 0 ? "*" : "");
    bool first = true;
    for_each_device(p.devices, [&](int d) {
      std::snprintf(line, sizeof(line), "%-*s %8s %-8s %12s %12s %12s\n", width,
                    first ? name.c_str() : "", first ? std::to_string(p.calls).c_str() : "",
                    device_name(d).c_str(), human_bytes(p.peak[d].bytes).c_str(),
                    human_bytes(p.growth[d].bytes).c_str(),
                    first ? human_bytes(p.held_bytes).c_str() : "");
      out += line;
      first = false;
    });
  }
  if (some_partial) out += "* some calls miss what another profiler took meanwhile; " + why + "\n";
  const std::vector<Suspect> suspects = leak_suspects(criteria);
  out += "leak suspects: ";
  if (suspects.empty()) out += "none";
  for (std::size_t i = 0; i < suspects.size(); ++i) {
    if (i != 0) out += ", ";
    out +=
        paths.path(suspects[i].path) + " (+" + human_bytes(suspects[i].verdict.growth_bytes) + ")";
  }
  out += '\n';
  return out;
}

}  // namespace regiontrace::memory
