// Inputs that are not trace files, given to every reading command: a FIFO
// nobody writes to (which a plain open() waits on for ever) and a gzip bomb
// (a few hundred KiB that inflate past the input limit). Each command must
// refuse them at once, naming the file, with exit code 2.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <zlib.h>

#include <filesystem>
#include <set>
#include <vector>

#include "cli_test_helpers.hpp"

namespace regiontrace::test {
namespace {

// `mib` MiB of newlines, gzip-compressed (about 1000:1): one 1 MiB member
// compressed once and written `mib` times (concatenated members are one
// valid gzip stream), so that making it takes no time.
void write_gzip_bomb(const std::string& path, int mib) {
  const std::string member_path = path + ".member";
  gzFile member = gzopen(member_path.c_str(), "wb9");
  ASSERT_NE(member, nullptr);
  const std::string chunk(1 << 20, '\n');
  ASSERT_EQ(gzwrite(member, chunk.data(), static_cast<unsigned>(chunk.size())),
            static_cast<int>(chunk.size()));
  ASSERT_EQ(gzclose(member), Z_OK);
  const std::string bytes = read_file(member_path);
  std::filesystem::remove(member_path);
  std::string all;
  for (int i = 0; i < mib; ++i) all += bytes;
  write_file(path, all);
}

class HostileInputs : public ::testing::Test {
 protected:
  void SetUp() override {
    fifo_ = dir_.file("pipe.json");
    ASSERT_EQ(mkfifo(fifo_.c_str(), 0600), 0);
    bomb_ = dir_.file("bomb.json.gz");
  }
  // The commands that read `input`; `timeout` turns a hang into a failure.
  std::vector<std::string> commands(const std::string& input) const {
    const std::string in = shell_quoted(input);
    return {"summary " + in, "summary --by-step " + in, "diff " + in + " " + in, "report " + in,
            "merge -o " + shell_quoted(dir_.file("merged.json")) + " " + in};
  }
  CleanEnv env_;
  TempDir dir_;
  std::string fifo_;
  std::string bomb_;
};

TEST_F(HostileInputs, AFifoIsRefusedBeforeItIsOpenedForReading) {
  for (const std::string& cmd : commands(fifo_)) {
    const auto r = run_command("timeout 60 " + shell_quoted(REGIONTRACE_CLI) + " " + cmd);
    EXPECT_EQ(r.exit_code, 2) << cmd << "\n" << r.output;
    EXPECT_NE(r.output.find(fifo_ + ": is not a regular file"), std::string::npos) << cmd << "\n"
                                                                                   << r.output;
  }
}

// With the default limit, a bomb is told by its ratio as soon as it has
// inflated 64 MiB, in a fraction of the memory the limit allows.
TEST_F(HostileInputs, AGzipBombIsToldByItsRatio) {
  // A memory summary is read whole (traces are streamed, never holding much).
  const std::string big = dir_.file("memory_summary_rank0.json.gz");
  write_gzip_bomb(big, 256);
  for (const std::string& cmd : {"report " + shell_quoted(big)}) {
    const auto r =
        run_command("ulimit -v 1048576 && timeout 60 " + shell_quoted(REGIONTRACE_CLI) + " " + cmd);
    EXPECT_EQ(r.exit_code, 2) << cmd << "\n" << r.output;
    EXPECT_NE(r.output.find(big + ": inflates more than 300 times"), std::string::npos)
        << cmd << "\n"
        << r.output;
  }
  // Not left for TempDir's check of every trace it holds, which would
  // inflate it whole.
  std::filesystem::remove(big);
}

TEST_F(HostileInputs, AGzipBombIsRefusedAtTheInputLimit) {
  write_gzip_bomb(bomb_, 64);
  // 64 MiB inflated against a 16 MiB limit, in 1 GiB of address space:
  // diff, which keeps what it reads, stops at the limit and names it;
  // summary (--by-step too), report and merge stream (what they keep is
  // bounded on its own) and stop where the text stops being a trace.
  for (const std::string& cmd : commands(bomb_)) {
    const auto r = run_command("ulimit -v 1048576 && REGIONTRACE_MAX_INPUT_MB=16 timeout 60 " +
                               shell_quoted(REGIONTRACE_CLI) + " " + cmd);
    EXPECT_EQ(r.exit_code, 2) << cmd << "\n" << r.output;
    EXPECT_NE(r.output.find(bomb_ + ": "), std::string::npos) << cmd << "\n" << r.output;
    if (cmd.rfind("diff", 0) == 0) {
      EXPECT_NE(r.output.find(bomb_ + ": holds more than 16 MiB of text once inflated"),
                std::string::npos)
          << cmd << "\n"
          << r.output;
    }
  }
  std::filesystem::remove(bomb_);  // as above
}

// A merge that fails midway (a truncated input after a good one) keeps the
// file already under the output's name, and leaves no temporary file.
TEST_F(HostileInputs, AFailedMergeLeavesTheOldOutputAsItWas) {
  std::string events;
  for (int i = 0; i < 20000; ++i) {
    events += std::string(i == 0 ? "" : ",") + "{\"ph\":\"X\",\"name\":\"op" + std::to_string(i) +
              "\",\"pid\":1,\"tid\":1,\"ts\":" + std::to_string(i) + ",\"dur\":1}";
  }
  const std::string good = dir_.file("rank0.json.gz");
  write_gzip(good, "{\"traceEvents\":[" + events + "]}");
  const std::string cut = dir_.file("rank1.json.gz");
  write_gzip(cut, "{\"traceEvents\":[" + events + "]}");
  const auto size = std::filesystem::file_size(cut);
  std::filesystem::resize_file(cut, size / 2);
  const std::string out = dir_.file("all.json");
  write_file(out, "previous merge\n");
  const auto r =
      run_cli("merge -o " + shell_quoted(out) + " " + shell_quoted(good) + " " + shell_quoted(cut));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find(cut), std::string::npos) << r.output;
  EXPECT_EQ(read_file(out), "previous merge\n");
  for (const auto& entry : std::filesystem::directory_iterator(dir_.path())) {
    EXPECT_EQ(entry.path().filename().string().find(".tmp"), std::string::npos) << entry.path();
  }
  // The same merge without the cut input replaces it whole.
  const auto ok = run_cli("merge -o " + shell_quoted(out) + " " + shell_quoted(good));
  EXPECT_EQ(ok.exit_code, 0) << ok.output;
  EXPECT_NE(read_file(out).find("\"op19999\""), std::string::npos);
}

// What summary and diff refuse, merge and report refused too: invalid UTF-8
// (merge copied it into its output) and a bare NaN (merge wrote `"ts":NaN`,
// which no JSON reader takes, and exited 0).
TEST_F(HostileInputs, InvalidUtf8AndBareNaNAreRefusedByEveryReader) {
  const std::string nan = dir_.file("nan.json");
  write_file(nan,
             "{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"region::a\",\"pid\":1,\"tid\":1,"
             "\"ts\":NaN,\"dur\":5,\"args\":{\"region\":\"a\"}}]}");
  const std::string bad_utf8 = dir_.file("utf8.json");
  write_file(bad_utf8,
             "{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"region::\xff\xfe\",\"pid\":1,"
             "\"tid\":1,\"ts\":1,\"dur\":5,\"args\":{\"region\":\"\xff\"}}]}");
  const std::string merged = dir_.file("merged.json");
  for (const std::string& cmd :
       std::vector<std::string>{"report", "merge -o " + shell_quoted(merged)}) {
    const auto r1 = run_cli(cmd + " " + shell_quoted(nan));
    EXPECT_EQ(r1.exit_code, 2) << cmd << "\n" << r1.output;
    EXPECT_NE(r1.output.find(nan + ": a bare NaN or Infinity, which is not JSON"),
              std::string::npos)
        << cmd << "\n"
        << r1.output;
    const auto r2 = run_cli(cmd + " " + shell_quoted(bad_utf8));
    EXPECT_EQ(r2.exit_code, 2) << cmd << "\n" << r2.output;
    EXPECT_NE(r2.output.find(bad_utf8 + ": event 0 is not valid UTF-8"), std::string::npos)
        << cmd << "\n"
        << r2.output;
  }
  EXPECT_FALSE(std::filesystem::exists(merged));
  const auto summary = run_cli("summary " + shell_quoted(bad_utf8));
  EXPECT_EQ(summary.exit_code, 2) << summary.output;
  EXPECT_NE(summary.output.find("not valid UTF-8"), std::string::npos) << summary.output;
}

// Region names with quotes and terminal control characters: every command
// shows the decoded name (`q"uote`, as `summary --json` gives it, not its
// JSON escape), and text output escapes control characters instead of
// sending them to the terminal.
TEST_F(HostileInputs, NamesAreDecodedOnceAndControlCharactersEscaped) {
  const std::string quote = "q\\\"uote";      // JSON text of q"uote
  const std::string esc = "red\\u001b[31mX";  // JSON text of red ESC [31m X
  auto span = [](const std::string& name_json, int ts) {
    return "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"region::" + name_json +
           "\",\"pid\":1,\"tid\":1,\"ts\":" + std::to_string(ts) +
           ",\"dur\":10,\"args\":{\"step\":0}}";
  };
  const std::string trace = dir_.file("names.json");
  write_file(trace, "{\"traceEvents\":[" + span(quote, 0) + "," + span(esc, 20) + "]}");

  const auto text = run_cli("report " + shell_quoted(trace));
  EXPECT_EQ(text.exit_code, 0) << text.output;
  EXPECT_NE(text.output.find("q\"uote"), std::string::npos) << text.output;
  EXPECT_EQ(text.output.find("q\\\"uote"), std::string::npos) << text.output;
  EXPECT_EQ(text.output.find('\x1b'), std::string::npos) << "raw ESC in the report";

  const auto json_out = run_cli_stdout("report --json " + shell_quoted(trace));
  const nlohmann::json report = nlohmann::json::parse(json_out.output);
  std::set<std::string> regions;
  for (const auto& r : report["regions"]) regions.insert(r["region"].get<std::string>());
  EXPECT_EQ(regions, (std::set<std::string>{"q\"uote", "red\x1b[31mX"})) << report.dump();

  const auto summary = run_cli("summary " + shell_quoted(trace));
  EXPECT_EQ(summary.exit_code, 0) << summary.output;
  EXPECT_EQ(summary.output.find('\x1b'), std::string::npos) << "raw ESC in the summary";
  EXPECT_NE(summary.output.find("red\\e[31mX"), std::string::npos) << summary.output;
}

// What one reader refuses, all refuse, naming the file: invalid escapes
// (`\x41`, a short `\u12`), raw control characters, a lone surrogate, a
// second "traceEvents" member (readers take one or the other), gzip data
// followed by garbage. merge used to copy the first four into a file that
// Python's json and summary then refused, and the fifth after its own
// "traceEvents", which readers then saw empty. Names that are valid JSON
// (escapes, a surrogate pair) merge into a file every reader opens.
TEST_F(HostileInputs, EveryReaderRefusesWhatSummaryRefuses) {
  auto event = [](const std::string& name_json) {
    return "{\"ph\":\"X\",\"name\":\"" + name_json +
           "\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":2,\"args\":{\"step\":0}}";
  };
  auto trace = [&](const std::string& name_json) {
    return "{\"traceEvents\":[" + event(name_json) + "]}";
  };
  std::vector<std::pair<std::string, std::string>> bad = {
      {"x41.json", trace("a\\x41b")},
      {"u12.json", trace("a\\u12")},
      {"control.json", trace(std::string("a") + '\x01' + "b")},
      {"surrogate.json", trace("a\\ud800b")},
      {"twice.json", trace("a") + ""},
  };
  bad.back().second.insert(bad.back().second.size() - 1, ",\"traceEvents\":[]");
  for (const auto& [name, text] : bad) write_file(dir_.file(name), text);
  bad.emplace_back("garbage.json.gz", "");
  write_gzip(dir_.file("garbage.json.gz"), trace("a"));
  {
    std::string bytes = read_file(dir_.file("garbage.json.gz"));
    write_file(dir_.file("garbage.json.gz"), bytes + "garbage!");
  }
  const std::string merged = dir_.file("merged.json");
  for (const auto& [name, text] : bad) {
    const std::string path = dir_.file(name);
    for (const std::string& cmd :
         std::vector<std::string>{"summary", "report", "merge -o " + shell_quoted(merged)}) {
      const auto r = run_cli(cmd + " " + shell_quoted(path));
      EXPECT_EQ(r.exit_code, 2) << cmd << " " << name << "\n" << r.output;
      EXPECT_NE(r.output.find(path + ": "), std::string::npos) << cmd << "\n" << r.output;
    }
    EXPECT_FALSE(std::filesystem::exists(merged)) << name;
  }

  const std::string good = dir_.file("good.json");
  write_file(good, trace("a\\u0041\\n\\\"\\ud83d\\ude00b"));
  ASSERT_EQ(run_cli("merge -o " + shell_quoted(merged) + " " + shell_quoted(good)).exit_code, 0);
  const nlohmann::json doc = nlohmann::json::parse(read_file(merged));
  // The name decoded: A, a newline, a quote, U+1F600, b.
  const std::string decoded = std::string("aA\n\"\xf0\x9f\x98\x80") + 'b';
  bool found = false;
  for (const auto& e : doc["traceEvents"]) found = found || e.value("name", "") == decoded;
  EXPECT_TRUE(found) << doc.dump();
  const auto summary = run_cli("summary " + shell_quoted(merged));
  EXPECT_EQ(summary.exit_code, 0) << summary.output;
}

}  // namespace
}  // namespace regiontrace::test
