// Running the built `regiontrace` program from tests, and the files it reads:
// activation-trace records and gzip.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace regiontrace::test {

// Runs `regiontrace <args>`; output holds stdout and stderr.
CommandResult run_cli(const std::string& args);
// Runs `regiontrace <args>`; output holds stdout only (for --json).
CommandResult run_cli_stdout(const std::string& args);
// Runs it and parses stdout as one JSON document.
nlohmann::json run_cli_json(const std::string& args, int expected_exit);

std::string shell_quoted(const std::string& path);

void write_gzip(const std::string& path, const std::string& text);
std::string read_gzip(const std::string& path);

// One activation record as the activation_trace sink writes it (compact, keys
// in the sink's order). Stats are added by the caller to `stats`.
nlohmann::ordered_json activation_record(const std::string& module, const std::string& tensor,
                                         int step, int seq);
std::string to_jsonl(const std::vector<nlohmann::ordered_json>& records);

}  // namespace regiontrace::test
