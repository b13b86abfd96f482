#include "trace_nesting_check.hpp"

#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <stdexcept>

namespace regiontrace::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct Slice {
  std::int64_t start = 0;  // ns, from the written microseconds
  std::int64_t end = 0;
  std::size_t event = 0;  // index in traceEvents
};

// The written microseconds to integer nanoseconds: the writers print at most
// three decimals, so this is exact and two slices that touch compare equal.
std::int64_t to_ns(const json& us) {
  return static_cast<std::int64_t>(std::llround(us.get<double>() * 1000.0));
}

std::string format_us(std::int64_t ns) {
  std::string out = ns < 0 ? "-" : "";
  const std::int64_t a = ns < 0 ? -ns : ns;
  out += std::to_string(a / 1000);
  if (a % 1000 != 0) {
    std::string frac = std::to_string(a % 1000);
    frac.insert(0, 3 - frac.size(), '0');
    while (frac.back() == '0') frac.pop_back();
    out += "." + frac;
  }
  return out;
}

std::string slice_text(const json& events, const Slice& s) {
  const json& e = events[s.event];
  const std::string name = e.contains("name") && e["name"].is_string()
                               ? e["name"].get<std::string>()
                               : std::string("(no name)");
  return "\"" + name + "\" [" + format_us(s.start) + ", " + format_us(s.end) + "] (event #" +
         std::to_string(s.event) + ")";
}

std::string read_maybe_gzip(const std::string& path) {
  // gzread passes a file that is not gzip through unchanged.
  gzFile f = gzopen(path.c_str(), "rb");
  if (f == nullptr) throw std::runtime_error("cannot open " + path);
  std::string out;
  char buf[1 << 16];
  int n = 0;
  while ((n = gzread(f, buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(n));
  const bool failed = n < 0;
  gzclose(f);
  if (failed) throw std::runtime_error("cannot decompress " + path);
  return out;
}

}  // namespace

NestingReport check_trace_nesting(const json& trace) {
  NestingReport report;
  if (!trace.is_object() || !trace.contains("traceEvents") || !trace["traceEvents"].is_array()) {
    return report;
  }
  report.is_trace = true;
  const json& events = trace["traceEvents"];
  std::map<std::pair<std::string, std::string>, std::vector<Slice>> tracks;
  auto add = [&](std::string text) {
    ++report.violation_count;
    if (report.violations.size() < NestingReport::kMaxListed) {
      report.violations.push_back(std::move(text));
    }
  };
  for (std::size_t i = 0; i < events.size(); ++i) {
    const json& e = events[i];
    if (!e.is_object() || e.value("ph", "") != "X") continue;
    if (!e.contains("ts") || !e["ts"].is_number()) continue;
    ++report.slices;
    Slice s;
    s.event = i;
    s.start = to_ns(e["ts"]);
    const std::int64_t dur = e.contains("dur") && e["dur"].is_number() ? to_ns(e["dur"]) : 0;
    s.end = s.start + dur;
    const std::string pid = e.contains("pid") ? e["pid"].dump() : "null";
    const std::string tid = e.contains("tid") ? e["tid"].dump() : "null";
    if (dur < 0) {
      add("pid " + pid + " tid " + tid + ": " + slice_text(events, s) + " has a negative dur");
      s.end = s.start;
    }
    tracks[{pid, tid}].push_back(s);
  }
  for (auto& [key, slices] : tracks) {
    // Outer before inner: by start, then the longer first.
    std::stable_sort(slices.begin(), slices.end(), [](const Slice& a, const Slice& b) {
      if (a.start != b.start) return a.start < b.start;
      return a.end > b.end;
    });
    std::vector<const Slice*> open;
    for (const Slice& s : slices) {
      while (!open.empty() && open.back()->end <= s.start) open.pop_back();
      // Every open slice started at or before s and ends after s starts:
      // s must end by its end.
      for (auto it = open.rbegin(); it != open.rend(); ++it) {
        const Slice& outer = **it;
        if (outer.end > s.start && s.end > outer.end) {
          add("pid " + key.first + " tid " + key.second + ": " + slice_text(events, s) +
              " starts inside " + slice_text(events, outer) + " and ends " +
              format_us(s.end - outer.end) + " us after it");
        }
      }
      open.push_back(&s);
    }
  }
  return report;
}

NestingReport check_trace_file_nesting(const std::string& path) {
  const json trace = json::parse(read_maybe_gzip(path), nullptr, /*allow_exceptions=*/false);
  if (trace.is_discarded()) return {};
  return check_trace_nesting(trace);
}

std::vector<TraceFileReport> check_traces_under(const std::string& dir) {
  std::vector<TraceFileReport> out;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    const std::string name = it->path().filename().string();
    auto ends_with = [&](const std::string& suffix) {
      return name.size() >= suffix.size() &&
             name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
    };
    if (!ends_with(".json") && !ends_with(".json.gz")) continue;
    try {
      NestingReport r = check_trace_file_nesting(it->path().string());
      if (r.is_trace) out.push_back({it->path().string(), std::move(r)});
    } catch (const std::exception&) {
      // Unreadable (removed or made unreadable by the test itself): not a trace to check.
    }
  }
  std::sort(out.begin(), out.end(),
            [](const TraceFileReport& a, const TraceFileReport& b) { return a.path < b.path; });
  return out;
}

std::string describe(const TraceFileReport& file) {
  std::string out = file.path + ": " + std::to_string(file.report.violation_count) +
                    " slice(s) break the nesting rule (of " + std::to_string(file.report.slices) +
                    " slices)";
  for (const std::string& v : file.report.violations) out += "\n  " + v;
  if (file.report.violation_count > static_cast<std::int64_t>(file.report.violations.size())) {
    out += "\n  ...";
  }
  return out;
}

}  // namespace regiontrace::test
