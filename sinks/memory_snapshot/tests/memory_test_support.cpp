#include "memory_test_support.hpp"

#include <gtest/gtest.h>

#include <filesystem>

namespace regiontrace::memory::test {

namespace fs = std::filesystem;
using regiontrace::test::builtin_plugin_dir;
using regiontrace::test::list_files;
using regiontrace::test::output_files;
using regiontrace::test::read_json;
using regiontrace::test::read_jsonl;

Options memory_options(const std::string& dir, const std::map<std::string, std::string>& values) {
  Options o;
  o.read_environment = false;
  o.set("plugins.paths", builtin_plugin_dir());
  o.set("output_dir", dir);
  o.set("log_level", "warn");
  o.set("handle_signals", "false");
  o.set("sinks.memory_snapshot.enabled", "true");
  for (const auto& [k, v] : values) o.set("sinks.memory_snapshot." + k, v);
  return o;
}

std::vector<json> MemoryOutputs::records_of(const std::string& path) const {
  std::vector<json> out;
  for (const json& r : records) {
    if (r.at("path") == path) out.push_back(r);
  }
  return out;
}

const json* MemoryOutputs::region_summary(const std::string& path) const {
  for (const json& r : summary.at("regions")) {
    if (r.at("path") == path) return &r;
  }
  return nullptr;
}

std::vector<std::string> MemoryOutputs::leak_suspect_paths() const {
  std::vector<std::string> out;
  for (const json& s : summary.at("leak_suspects")) out.push_back(s.at("path"));
  return out;
}

namespace {

std::string only_file(const std::string& dir, const std::string& stem, const std::string& ext) {
  std::vector<std::string> found;
  for (const std::string& f : output_files(dir, stem)) {
    const std::string name = fs::path(f).filename().string();
    if (name.size() > ext.size() && name.compare(name.size() - ext.size(), ext.size(), ext) == 0 &&
        name.find("_pid") != std::string::npos) {
      found.push_back(f);
    }
  }
  EXPECT_EQ(found.size(), 1u) << "files " << stem << "_*" << ext << " in " << dir;
  return found.empty() ? std::string() : found.front();
}

}  // namespace

MemoryOutputs read_outputs(const std::string& dir) {
  MemoryOutputs out;
  const std::string records = only_file(dir, "memory", ".jsonl");
  if (!records.empty()) out.records = read_jsonl(records);
  const std::string summary = only_file(dir, "memory_summary", ".json");
  if (!summary.empty()) out.summary = read_json(summary);
  if (!output_files(dir, "memory_trace").empty()) {
    out.trace = read_json(only_file(dir, "memory_trace", ".json"));
  }
  for (const std::string& f : list_files(dir, "memory_snapshot_")) {
    if (fs::path(f).extension() != ".json") continue;
    out.snapshot_files.push_back(fs::path(f).filename().string());
    out.snapshots.push_back(read_json(f));
  }
  return out;
}

const json* snapshot_region(const json& snapshot, const std::string& path) {
  for (const json& g : snapshot.at("regions")) {
    if (g.at("path") == path) return &g;
  }
  return nullptr;
}

}  // namespace regiontrace::memory::test
