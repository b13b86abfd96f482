// Reading what the sinks wrote: gzip-aware files, Chrome traces, JSONL, and
// finding files in an output folder.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace regiontrace::test {

// The file's text; gzip-compressed files (by their magic bytes) are inflated.
std::string read_text_maybe_gz(const std::string& path);
nlohmann::json read_json_maybe_gz(const std::string& path);

// Every regular file below `dir` (recursively) whose file name passes `keep`, sorted.
std::vector<std::string> files_under(const std::string& dir,
                                     const std::function<bool(const std::string& name)>& keep);
// "<trace's folder>/summaries/<trace's name without extension>": where the
// torch_profiler sink's default layout puts the trace's .summary.txt and
// .summary.json.
std::string op_summary_base(const std::string& trace_path);
bool ends_with(const std::string& s, const std::string& suffix);
bool contains(const std::string& s, const std::string& part);

// Events of a Chrome trace (`traceEvents`, or a bare array) with this name.
std::vector<nlohmann::json> events_named(const nlohmann::json& trace, const std::string& name);
// Names of all events of a Chrome trace whose phase is `ph`.
std::vector<std::string> event_names(const nlohmann::json& trace, const std::string& ph);

}  // namespace regiontrace::test
