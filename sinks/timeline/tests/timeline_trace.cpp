#include "timeline_trace.hpp"

#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <stdexcept>

#include "test_support.hpp"

namespace regiontrace::timeline::test {

json read_gzip_json(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (f == nullptr) throw std::runtime_error("cannot open " + path);
  std::string text;
  char buf[1 << 16];
  int n = 0;
  while ((n = gzread(f, buf, sizeof(buf))) > 0) text.append(buf, static_cast<std::size_t>(n));
  gzclose(f);
  return json::parse(text);
}

std::string only_trace(const std::string& dir) {
  const std::vector<std::string> files = regiontrace::test::output_files(dir, "timeline");
  EXPECT_EQ(files.size(), 1u);
  return files.empty() ? std::string() : files.front();
}

std::vector<json> events(const json& trace, const std::string& ph) {
  std::vector<json> out;
  for (const json& e : trace.at("traceEvents")) {
    if (e.at("ph") == ph) out.push_back(e);
  }
  return out;
}

std::map<std::pair<long, long>, std::vector<json>> spans_by_track(const json& trace) {
  std::map<std::pair<long, long>, std::vector<json>> out;
  for (const json& e : events(trace, "X")) {
    out[{e.at("pid").get<long>(), e.at("tid").get<long>()}].push_back(e);
  }
  return out;
}

std::string nesting_violation(const json& trace) {
  for (auto& [track, spans] : spans_by_track(trace)) {
    std::vector<std::pair<double, double>> v;
    for (const json& s : spans) {
      const double ts = s.at("ts").get<double>();
      v.emplace_back(ts, ts + s.at("dur").get<double>());
    }
    // By start, the longer first: each span must end inside every open one.
    std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first < b.first : a.second > b.second;
    });
    std::vector<std::pair<double, double>> open;
    for (const auto& s : v) {
      // ts + dur is summed in doubles: a nanosecond of slack.
      while (!open.empty() && open.back().second <= s.first + 1e-6) open.pop_back();
      if (!open.empty() && s.second > open.back().second + 1e-6) {
        return "tid " + std::to_string(track.second) + ": [" + std::to_string(s.first) + ", " +
               std::to_string(s.second) + "] overlaps [" + std::to_string(open.back().first) +
               ", " + std::to_string(open.back().second) + "]";
      }
      open.push_back(s);
    }
  }
  return {};
}

}  // namespace regiontrace::timeline::test
