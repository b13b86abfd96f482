// `regiontrace diff`: alignment, tolerances, reports and exit codes, checked
// on activation traces written here and on the program's parsed --json.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <random>

#include "cli_test_helpers.hpp"

namespace regiontrace::test {
namespace {

using nlohmann::ordered_json;

constexpr int kSteps = 3;
constexpr int kBlocks = 8;

// A small model run: per step, each block's output and a shared `norm`
// module observed after every block (so `norm` has 8 occurrences per step).
// `adjust` may change a record's stats before it is written.
std::vector<ordered_json> model_run(
    const std::function<void(ordered_json&, int step, int block)>& adjust = {}) {
  std::vector<ordered_json> records;
  int seq = 0;
  for (int step = 0; step < kSteps; ++step) {
    for (int b = 0; b < kBlocks; ++b) {
      ordered_json r = activation_record("blocks." + std::to_string(b), "out", step, seq++);
      r["abs_mean"] = 1.0 + 0.1 * b + 0.01 * step;
      r["sum"] = -5.5 + b;
      r["max"] = 3.25 + b;
      r["std"] = 0.75;
      r["shape"] = {1, 16, 32};
      r["dtype"] = "torch.bfloat16";
      if (adjust) adjust(r, step, b);
      records.push_back(r);
      ordered_json norm = activation_record("norm", "out", step, seq++);
      norm["abs_mean"] = 0.5 + 0.03 * b;
      norm["sum"] = 2.0 * b;
      records.push_back(norm);
    }
  }
  return records;
}

std::vector<ordered_json> shuffled(std::vector<ordered_json> records) {
  std::mt19937 rng(7);
  std::shuffle(records.begin(), records.end(), rng);
  return records;
}

class DiffCommand : public ::testing::Test {
 protected:
  std::string write(const std::string& name, const std::string& text) {
    const std::string path = dir_.file(name);
    write_file(path, text);
    return path;
  }
  std::string write(const std::string& name, const std::vector<ordered_json>& records) {
    return write(name, to_jsonl(records));
  }
  std::string args(const std::string& a, const std::string& b, const std::string& more = "") {
    return "diff " + shell_quoted(a) + " " + shell_quoted(b) + (more.empty() ? "" : " " + more);
  }

  TempDir dir_;
};

TEST_F(DiffCommand, IdenticalFilesAreEqual) {
  const auto a = write("a.jsonl", model_run());
  const auto b = write("b.jsonl", model_run());
  const auto r = run_cli(args(a, b));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("EQUAL within tolerance"), std::string::npos) << r.output;

  const auto report = run_cli_json(args(a, b, "--json"), 0);
  EXPECT_TRUE(report["equal"].get<bool>());
  EXPECT_EQ(report["totals"]["matched_records"], 2 * kSteps * kBlocks);
  EXPECT_EQ(report["totals"]["divergent_values"], 0);
  // blocks: abs_mean sum max std shape dtype; norm: abs_mean sum.
  EXPECT_EQ(report["totals"]["values_compared"], kSteps * kBlocks * (6 + 2));
  EXPECT_TRUE(report["first_divergence"].is_null());
}

TEST_F(DiffCommand, OnePerturbedLayerIsTheOnlyOneReported) {
  const auto a = write("a.jsonl", model_run([](ordered_json& r, int step, int block) {
                         if (step == 1 && block == 3)
                           r["abs_mean"] = r["abs_mean"].get<double>() * 1.25;
                       }));
  const auto b = write("b.jsonl", shuffled(model_run()));
  const auto report = run_cli_json(args(a, b, "--json"), 1);
  EXPECT_FALSE(report["equal"].get<bool>());
  EXPECT_EQ(report["totals"]["divergent_records"], 1);
  EXPECT_EQ(report["totals"]["divergent_values"], 1);
  const auto& first = report["first_divergence"];
  EXPECT_EQ(first["module"], "blocks.3");
  EXPECT_EQ(first["tensor"], "out");
  EXPECT_EQ(first["step"], 1);
  ASSERT_EQ(first["stats"].size(), 1u);
  EXPECT_EQ(first["stats"][0]["stat"], "abs_mean");
  EXPECT_DOUBLE_EQ(first["stats"][0]["a"].get<double>(), (1.0 + 0.3 + 0.01) * 1.25);
  EXPECT_DOUBLE_EQ(first["stats"][0]["b"].get<double>(), 1.0 + 0.3 + 0.01);
  EXPECT_NEAR(first["stats"][0]["rel_error"].get<double>(), 0.2, 1e-12);
  // Line in A: step 1 starts after 2*8 records of step 0; blocks.3 is the 7th of step 1.
  EXPECT_EQ(first["a_line"], 2 * kBlocks + 7);
}

TEST_F(DiffCommand, FirstDivergenceFollowsAsExecutionOrderNotTheWorstValue) {
  // The error grows through the later blocks, as a real divergence does: the
  // worst values are at the end, the first divergent record is blocks.3 of step 1.
  auto perturb = [](ordered_json& r, int step, int block) {
    if (step * kBlocks + block >= 1 * kBlocks + 3) {
      r["abs_mean"] = r["abs_mean"].get<double>() * (1.0 + 0.05 * (block + 1));
    }
  };
  const auto a = write("a.jsonl", shuffled(model_run(perturb)));  // seq gives the order
  const auto b = write("b.jsonl", model_run());
  const auto report = run_cli_json(args(a, b, "--json --top 3"), 1);
  EXPECT_EQ(report["first_divergence"]["module"], "blocks.3");
  EXPECT_EQ(report["first_divergence"]["step"], 1);
  ASSERT_EQ(report["worst"].size(), 3u);
  EXPECT_EQ(report["worst"][0]["module"], "blocks.7");
  EXPECT_NEAR(report["worst"][0]["rel_error"].get<double>(), 0.4 / 1.4, 1e-12);
  for (std::size_t i = 1; i < report["worst"].size(); ++i) {
    EXPECT_GE(report["worst"][i - 1]["rel_error"].get<double>(),
              report["worst"][i]["rel_error"].get<double>());
  }

  const auto text = run_cli(args(a, b));
  EXPECT_EQ(text.exit_code, 1);
  const auto first = text.output.find("First divergence in A's execution order:");
  ASSERT_NE(first, std::string::npos) << text.output;
  const auto worst = text.output.find("Worst ", first);
  const auto where = text.output.find("module blocks.3  tensor out  step 1", first);
  EXPECT_LT(where, worst) << text.output;
  EXPECT_NE(text.output.find("Result: DIVERGENT"), std::string::npos);
}

TEST_F(DiffCommand, ReorderedAndReformattedFilesAreEqual) {
  const auto a = write("a.jsonl", model_run());
  // Same values, other spelling: reversed key order, 1.0 as 1.00000, exponents,
  // spaces, CRLF, blank lines, and lines shuffled (seq restores the order of
  // the norm module's eight occurrences per step).
  std::string b_text;
  for (const auto& r : shuffled(model_run())) {
    std::vector<std::string> fields;
    for (auto it = r.begin(); it != r.end(); ++it) {
      std::string value;
      if (it.value().is_number_float()) {
        char buf[64];
        std::snprintf(buf, sizeof(buf), "%.17e", it.value().get<double>());
        value = buf;
      } else if (it.key() == "shape") {
        value = "[ 1, 16, 32 ]";
      } else {
        value = it.value().dump();
      }
      fields.push_back("\"" + it.key() + "\" : " + value);
    }
    std::reverse(fields.begin(), fields.end());
    std::string line = "{ ";
    for (std::size_t i = 0; i < fields.size(); ++i) line += (i ? ", " : "") + fields[i];
    b_text += line + " }\r\n\r\n";
  }
  const auto b = write("b.jsonl", b_text);
  const auto report = run_cli_json(args(a, b, "--json --atol 0 --rtol 0"), 0);
  EXPECT_TRUE(report["equal"].get<bool>()) << report.dump(1);
  EXPECT_EQ(report["totals"]["matched_records"], 2 * kSteps * kBlocks);

  // And a by-hand pair: 1.0 vs 1.00000 vs 1, 0.001 vs 1e-3.
  const auto c = write("c.jsonl",
                       "{\"module\":\"m\",\"tensor\":\"out\",\"step\":null,\"abs_mean\":1.0,"
                       "\"sum\":0.001}\n");
  const auto d = write("d.jsonl",
                       "{\"sum\": 1e-3, \"abs_mean\": 1.00000, \"tensor\": \"out\", "
                       "\"module\": \"m\", \"step\": null}\n");
  EXPECT_EQ(run_cli(args(c, d, "--rtol 0 --atol 0")).exit_code, 0);
}

TEST_F(DiffCommand, PythonSideRecordsWithoutBookkeepingDiffAgainstTheSink) {
  // FastVideo's hooks write no v/rank/seq, spaces after separators, and bare
  // NaN (Python's json.dumps) where the SDK writes "NaN".
  const auto sink = write("sink.jsonl",
                          "{\"v\":1,\"module\":\"block.layers.0\",\"tensor\":\"out\",\"step\":0,"
                          "\"rank\":0,\"seq\":0,\"abs_mean\":1.234,\"sum\":\"NaN\","
                          "\"shape\":[1,4096,5120],\"dtype\":\"torch.bfloat16\"}\n");
  const auto python = write("python.jsonl",
                            "{\"module\": \"block.layers.0\", \"tensor\": \"out\", \"step\": 0, "
                            "\"abs_mean\": 1.234, \"sum\": NaN, \"shape\": [1, 4096, 5120], "
                            "\"dtype\": \"torch.bfloat16\"}\n");
  const auto report = run_cli_json(args(sink, python, "--json"), 0);
  EXPECT_EQ(report["totals"]["values_compared"], 4);
}

TEST_F(DiffCommand, ToleranceDecidesWhatDiverges) {
  auto one = [&](const std::string& name, const std::string& stats) {
    return write(name, "{\"module\":\"m\",\"tensor\":\"out\",\"step\":0," + stats + "}\n");
  };
  // 1% apart: within the bf16 default (rtol 1.6e-2), not within --rtol 1e-3.
  auto a = one("a1.jsonl", "\"abs_mean\":1.00");
  auto b = one("b1.jsonl", "\"abs_mean\":1.01");
  EXPECT_EQ(run_cli(args(a, b)).exit_code, 0);
  EXPECT_EQ(run_cli(args(a, b, "--rtol 1e-3")).exit_code, 1);
  EXPECT_EQ(run_cli(args(a, b, "--rtol 0.0099 --atol 0")).exit_code, 1);
  EXPECT_EQ(run_cli(args(a, b, "--rtol 0.0099 --atol 0.0002")).exit_code, 0);
  // Near zero the absolute tolerance decides.
  a = one("a2.jsonl", "\"sum\":0");
  b = one("b2.jsonl", "\"sum\":5e-6");
  EXPECT_EQ(run_cli(args(a, b)).exit_code, 0);
  EXPECT_EQ(run_cli(args(a, b, "--atol 1e-6")).exit_code, 1);
  // Exact stats ignore tolerances.
  a = one("a3.jsonl", "\"numel\":4096,\"shape\":[64,64],\"dtype\":\"torch.float32\"");
  b = one("b3.jsonl", "\"numel\":4097,\"shape\":[64, 64],\"dtype\":\"torch.float32\"");
  auto report = run_cli_json(args(a, b, "--json --rtol 0.5"), 1);
  ASSERT_EQ(report["first_divergence"]["stats"].size(), 1u);
  EXPECT_EQ(report["first_divergence"]["stats"][0]["stat"], "numel");
  b = one("b4.jsonl", "\"numel\":4096,\"shape\":[64,65],\"dtype\":\"torch.bfloat16\"");
  report = run_cli_json(args(a, b, "--json --rtol 0.5"), 1);
  ASSERT_EQ(report["first_divergence"]["stats"].size(), 2u);
  EXPECT_EQ(report["first_divergence"]["stats"][0]["stat"], "shape");
  EXPECT_EQ(report["first_divergence"]["stats"][0]["b"], nlohmann::json::array({64, 65}));
  EXPECT_EQ(report["first_divergence"]["stats"][1]["b"], "torch.bfloat16");
  // Non-finite values: equal to themselves, divergent from anything else.
  a = one("a5.jsonl", "\"max\":\"Infinity\",\"min\":\"NaN\",\"sum\":\"-Infinity\"");
  b = one("b5.jsonl", "\"max\":\"Infinity\",\"min\":\"NaN\",\"sum\":\"-Infinity\"");
  EXPECT_EQ(run_cli(args(a, b)).exit_code, 0);
  b = one("b6.jsonl", "\"max\":1e308,\"min\":0,\"sum\":\"Infinity\"");
  report = run_cli_json(args(a, b, "--json"), 1);
  EXPECT_EQ(report["totals"]["divergent_values"], 3);
  EXPECT_EQ(report["worst"][0]["rel_error"], "Infinity");
}

TEST_F(DiffCommand, StatsOptionRestrictsTheComparison) {
  const auto a = write("a.jsonl", model_run([](ordered_json& r, int, int block) {
                         if (block == 5) r["sum"] = r["sum"].get<double>() + 1.0;
                       }));
  const auto b = write("b.jsonl", model_run());
  EXPECT_EQ(run_cli(args(a, b)).exit_code, 1);
  // Options may come before the files too.
  auto report = run_cli_json(
      "diff --stats abs_mean,max --json " + shell_quoted(a) + " " + shell_quoted(b), 0);
  ASSERT_EQ(report["stats"].size(), 2u);
  EXPECT_EQ(report["stats"][0]["stat"], "abs_mean");
  EXPECT_EQ(report["stats"][1]["stat"], "max");
  EXPECT_EQ(report["totals"]["values_compared"], kSteps * kBlocks * 3);  // norm has no max
  report = run_cli_json(args(a, b, "--json --stats sum"), 1);
  EXPECT_EQ(report["first_divergence"]["module"], "blocks.5");
  EXPECT_EQ(report["first_divergence"]["step"], 0);
  const auto r = run_cli(args(a, b, "--stats abs_mena"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("abs_mena"), std::string::npos) << r.output;
}

TEST_F(DiffCommand, StatsOnOneSideOnlyAreNotCompared) {
  const auto a = write("a.jsonl",
                       "{\"module\":\"m\",\"tensor\":\"out\",\"step\":0,"
                       "\"abs_mean\":1,\"std\":2}\n");
  const auto b = write("b.jsonl",
                       "{\"module\":\"m\",\"tensor\":\"out\",\"step\":0,"
                       "\"abs_mean\":1,\"rms\":3}\n");
  const auto report = run_cli_json(args(a, b, "--json"), 0);
  EXPECT_EQ(report["totals"]["values_compared"], 1);
  for (const auto& s : report["stats"]) {
    if (s["stat"] == "std") {
      EXPECT_EQ(s["only_in_a"], 1);
    }
    if (s["stat"] == "rms") {
      EXPECT_EQ(s["only_in_b"], 1);
    }
  }
}

TEST_F(DiffCommand, FailedStatsAreReported) {
  const auto a = write("a.jsonl",
                       "{\"module\":\"m\",\"tensor\":\"out\",\"step\":0,"
                       "\"abs_mean\":\"<error: out of memory>\",\"sum\":1}\n");
  auto b = write("b.jsonl",
                 "{\"module\":\"m\",\"tensor\":\"out\",\"step\":0,"
                 "\"abs_mean\":\"<error: out of memory>\",\"sum\":1}\n");
  auto report = run_cli_json(args(a, b, "--json"), 0);
  EXPECT_EQ(report["totals"]["values_compared"], 1);
  EXPECT_EQ(report["stats"][0]["failed_both"], 1);
  b = write("b2.jsonl",
            "{\"module\":\"m\",\"tensor\":\"out\",\"step\":0,"
            "\"abs_mean\":0.5,\"sum\":1}\n");
  report = run_cli_json(args(a, b, "--json"), 1);
  EXPECT_EQ(report["first_divergence"]["stats"][0]["a"], "<error: out of memory>");
  EXPECT_EQ(report["first_divergence"]["stats"][0]["b"], 0.5);
}

TEST_F(DiffCommand, RecordsOnOneSideOnlyAreListed) {
  auto a_records = model_run();
  auto b_records = model_run();
  ordered_json extra = activation_record("head", "logits", 2, 1000);
  extra["abs_mean"] = 4.0;
  a_records.push_back(extra);
  // B lacks the last `norm` of step 1 (its occurrence 7, after blocks.7).
  auto last_norm = std::find_if(b_records.begin(), b_records.end(), [](const auto& r) {
    return r["module"] == "norm" && r["step"] == 1 && r["seq"] == 2 * kBlocks + 2 * 7 + 1;
  });
  ASSERT_NE(last_norm, b_records.end());
  b_records.erase(last_norm);
  const auto a = write("a.jsonl", a_records);
  const auto b = write("b.jsonl", b_records);
  const auto report = run_cli_json(args(a, b, "--json"), 1);
  EXPECT_EQ(report["totals"]["only_in_a"], 2);
  EXPECT_EQ(report["totals"]["only_in_b"], 0);
  EXPECT_EQ(report["totals"]["divergent_values"], 0);
  ASSERT_EQ(report["only_in_a"].size(), 2u);
  // In A's execution order.
  EXPECT_EQ(report["only_in_a"][0]["module"], "norm");
  EXPECT_EQ(report["only_in_a"][0]["step"], 1);
  EXPECT_EQ(report["only_in_a"][0]["occurrence"], kBlocks - 1);
  EXPECT_EQ(report["only_in_a"][1]["module"], "head");
  EXPECT_EQ(report["only_in_a"][1]["line"], 2 * kSteps * kBlocks + 1);

  const auto text = run_cli(args(a, b));
  EXPECT_NE(text.output.find("Only in A (" + a + "): 2 records"), std::string::npos) << text.output;
}

TEST_F(DiffCommand, MalformedInputNamesFileAndLine) {
  const auto good = write("good.jsonl", model_run());
  auto lines = to_jsonl(model_run());
  auto bad_line = [&](const std::string& name, const std::string& replacement) {
    std::string text = lines;
    std::size_t start = 0;
    for (int i = 0; i < 2; ++i) start = text.find('\n', start) + 1;  // line 3
    text.replace(start, text.find('\n', start) - start, replacement);
    return write(name, text);
  };
  struct Case {
    std::string replacement;
    std::string why;
  };
  const std::vector<Case> cases = {
      {"{\"module\":\"blocks.1\",\"tensor\":\"out\",\"step\":0,\"abs_mean\":1.2", "malformed JSON"},
      {"{\"module\":\"blocks.1\",\"step\":0,\"abs_mean\":1.2}", "no \"tensor\""},
      {"{\"module\":\"blocks.1\",\"tensor\":\"out\",\"step\":\"zero\"}", "\"step\""},
      {"{\"module\":7,\"tensor\":\"out\",\"step\":0}", "\"module\" must be a string"},
      {"[1,2,3]", "JSON object"},
      {"{\"v\":2,\"module\":\"blocks.1\",\"tensor\":\"out\",\"step\":0}", "version"},
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const auto bad = bad_line("bad" + std::to_string(i) + ".jsonl", cases[i].replacement);
    const auto r = run_cli(args(good, bad));
    EXPECT_EQ(r.exit_code, 2) << cases[i].replacement << "\n" << r.output;
    EXPECT_NE(r.output.find(bad + ":3:"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find(cases[i].why), std::string::npos) << r.output;
  }
  const auto missing = run_cli(args(good, dir_.file("missing.jsonl")));
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.output.find("missing.jsonl"), std::string::npos);
  EXPECT_EQ(run_cli("diff " + shell_quoted(good)).exit_code, 2);
}

TEST_F(DiffCommand, ReadsGzipAndReportsDroppedRecords) {
  const auto a = dir_.file("a.jsonl.gz");
  // The sink's closing line, as sinks/activation_trace writes it.
  write_gzip(a, to_jsonl(model_run()) +
                    "{\"v\":1,\"summary\":{\"records\":60,\"dropped\":12,\"rank\":0}}\n");
  const auto b = write("b.jsonl", model_run());
  const auto report = run_cli_json(args(a, b, "--json"), 0);
  EXPECT_EQ(report["a"]["records"], 2 * kSteps * kBlocks);
  EXPECT_EQ(report["a"]["dropped"], 12);
  const auto text = run_cli(args(a, b));
  EXPECT_NE(text.output.find("reports 12 dropped records"), std::string::npos) << text.output;
}

TEST_F(DiffCommand, ThousandsOfRecordsFindTheOnePerturbedValue) {
  std::vector<ordered_json> a_records;
  std::vector<ordered_json> b_records;
  for (int i = 0; i < 20000; ++i) {
    ordered_json r = activation_record("layers." + std::to_string(i % 100), "out", i / 100, i);
    r["abs_mean"] = 1.0 + i * 1e-4;
    r["sum"] = -3.0 + i;
    b_records.push_back(r);
    if (i == 12345) r["sum"] = r["sum"].get<double>() * 1.02;
    a_records.push_back(r);
  }
  const auto a = write("a.jsonl", a_records);
  const auto b = write("b.jsonl", shuffled(b_records));
  const auto report = run_cli_json(args(a, b, "--json"), 1);
  EXPECT_EQ(report["totals"]["divergent_values"], 1);
  EXPECT_EQ(report["first_divergence"]["module"], "layers.45");
  EXPECT_EQ(report["first_divergence"]["step"], 123);
  EXPECT_EQ(report["first_divergence"]["a_line"], 12346);
}

TEST_F(DiffCommand, BlankLinesDoNotInflateTheMemoryReserved) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "sanitizers reserve terabytes of address space: ulimit -v cannot apply";
#endif
  // Sizing by line count alone once reserved lines x (first record's stats + 1)
  // values: 6.4 GB for this 2 MB file, std::bad_alloc wherever memory is capped.
  ordered_json wide = activation_record("m", "out", 0, 0);
  for (int i = 0; i < 200; ++i) wide["s" + std::to_string(i)] = 0.5 * i;
  const auto a = write("a.jsonl", wide.dump() + "\n" + std::string(2000000, '\n'));
  wide["s7"] = 99.0;
  const auto b = write("b.jsonl", to_jsonl({wide}));
  const auto r =
      run_command("ulimit -v 1048576 && " + shell_quoted(REGIONTRACE_CLI) + " " + args(a, b));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("Totals: 1 records matched, 1 divergent (1 of 200 values)"),
            std::string::npos)
      << r.output;
}

}  // namespace
}  // namespace regiontrace::test
