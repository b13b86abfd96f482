#include "cli_test_helpers.hpp"

#include <gtest/gtest.h>
#include <zlib.h>

#include <stdexcept>

namespace regiontrace::test {

std::string shell_quoted(const std::string& path) {
  return "'" + path + "'";
}

CommandResult run_cli(const std::string& args) {
  return run_command(shell_quoted(REGIONTRACE_CLI) + " " + args);
}

CommandResult run_cli_stdout(const std::string& args) {
  // run_command joins stderr to stdout; the inner redirect keeps it out.
  return run_command("( " + shell_quoted(REGIONTRACE_CLI) + " " + args + " 2>/dev/null )");
}

nlohmann::json run_cli_json(const std::string& args, int expected_exit) {
  const CommandResult r = run_cli_stdout(args);
  EXPECT_EQ(r.exit_code, expected_exit) << args << "\n" << r.output;
  try {
    return nlohmann::json::parse(r.output);
  } catch (const nlohmann::json::exception& e) {
    ADD_FAILURE() << "not JSON: " << e.what() << "\n" << r.output;
    return {};
  }
}

void write_gzip(const std::string& path, const std::string& text) {
  gzFile file = gzopen(path.c_str(), "wb");
  if (file == nullptr) throw std::runtime_error("cannot write " + path);
  gzwrite(file, text.data(), static_cast<unsigned>(text.size()));
  gzclose(file);
}

std::string read_gzip(const std::string& path) {
  gzFile file = gzopen(path.c_str(), "rb");
  if (file == nullptr) throw std::runtime_error("cannot read " + path);
  std::string text;
  char buf[1 << 16];
  int n = 0;
  while ((n = gzread(file, buf, sizeof(buf))) > 0) text.append(buf, static_cast<std::size_t>(n));
  gzclose(file);
  return text;
}

nlohmann::ordered_json activation_record(const std::string& module, const std::string& tensor,
                                         int step, int seq) {
  return {{"v", 1},       {"module", module}, {"tensor", tensor},
          {"step", step}, {"rank", 0},        {"seq", seq}};
}

std::string to_jsonl(const std::vector<nlohmann::ordered_json>& records) {
  std::string text;
  for (const auto& r : records) text += r.dump() + "\n";
  return text;
}

}  // namespace regiontrace::test
