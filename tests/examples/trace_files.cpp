#include "trace_files.hpp"

#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>

namespace regiontrace::test {

std::string read_text_maybe_gz(const std::string& path) {
  // gzread passes files that are not compressed through unchanged.
  gzFile f = gzopen(path.c_str(), "rb");
  if (f == nullptr) throw std::runtime_error("cannot open " + path);
  std::string text;
  char buf[1 << 16];
  int n = 0;
  while ((n = gzread(f, buf, sizeof buf)) > 0) text.append(buf, static_cast<std::size_t>(n));
  const bool failed = n < 0;
  gzclose(f);
  if (failed) throw std::runtime_error("cannot inflate " + path + " (truncated gzip?)");
  return text;
}

nlohmann::json read_json_maybe_gz(const std::string& path) {
  return nlohmann::json::parse(read_text_maybe_gz(path));
}

std::vector<std::string> files_under(const std::string& dir,
                                     const std::function<bool(const std::string& name)>& keep) {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file() && keep(e.path().filename().string())) out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string op_summary_base(const std::string& trace_path) {
  namespace fs = std::filesystem;
  std::string name = fs::path(trace_path).filename().string();
  for (const char* ext : {".pt.trace.json.gz", ".pt.trace.json", ".json.gz", ".json"}) {
    if (ends_with(name, ext)) {
      name.resize(name.size() - std::string(ext).size());
      break;
    }
  }
  return (fs::path(trace_path).parent_path() / "summaries" / name).string();
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

namespace {
const nlohmann::json& events_of(const nlohmann::json& trace) {
  if (trace.is_array()) return trace;
  return trace.at("traceEvents");
}
}  // namespace

std::vector<nlohmann::json> events_named(const nlohmann::json& trace, const std::string& name) {
  std::vector<nlohmann::json> out;
  for (const nlohmann::json& e : events_of(trace)) {
    if (e.is_object() && e.value("name", std::string()) == name) out.push_back(e);
  }
  return out;
}

std::vector<std::string> event_names(const nlohmann::json& trace, const std::string& ph) {
  std::vector<std::string> out;
  for (const nlohmann::json& e : events_of(trace)) {
    if (e.is_object() && e.value("ph", std::string()) == ph)
      out.push_back(e.value("name", std::string()));
  }
  return out;
}

}  // namespace regiontrace::test
