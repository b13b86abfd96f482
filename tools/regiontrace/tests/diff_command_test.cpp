// `regiontrace diff`: alignment, tolerances, reports and exit codes, checked
// on activation traces written here and on the program's parsed --json.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <tuple>
#include <utility>

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

// A second run into the same folder makes `diff ref/*.jsonl port/*.jsonl`
// pass three files: the message says why, not CLI11's "argument not expected".
TEST_F(DiffCommand, AGlobThatMatchedSeveralFilesIsExplained) {
  const auto a = write("a.jsonl", model_run());
  const auto b = write("b.jsonl", model_run());
  const auto c = write("c.jsonl", model_run());
  const auto r = run_cli(args(a, b, shell_quoted(c)));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("takes two traces (the one checked, then the reference), got 3"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("a glob matched several files?"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("argument not expected"), std::string::npos) << r.output;
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
  const auto first = text.output.find("First divergence (earliest step, then execution order):");
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
  // 1% apart: within bf16's tolerance (rtol 1.6e-2), not within --rtol 1e-3.
  auto a = one("a1.jsonl", "\"abs_mean\":1.00");
  auto b = one("b1.jsonl", "\"abs_mean\":1.01");
  EXPECT_EQ(run_cli(args(a, b, "--dtype bf16")).exit_code, 0);
  EXPECT_EQ(run_cli(args(a, b, "--dtype bf16 --rtol 1e-3")).exit_code, 1);
  EXPECT_EQ(run_cli(args(a, b, "--rtol 0.0099 --atol 0")).exit_code, 1);
  EXPECT_EQ(run_cli(args(a, b, "--rtol 0.0099 --atol 0.0002")).exit_code, 0);
  // Near zero the absolute tolerance decides.
  a = one("a2.jsonl", "\"max\":0");
  b = one("b2.jsonl", "\"max\":5e-6");
  EXPECT_EQ(run_cli(args(a, b, "--atol 1e-5")).exit_code, 0);
  EXPECT_EQ(run_cli(args(a, b, "--atol 1e-6")).exit_code, 1);
  // Exact stats ignore tolerances.
  a = one("a3.jsonl", "\"numel\":4096,\"shape\":[64,64],\"dtype\":\"torch.float32\"");
  b = one("b3.jsonl", "\"numel\":4097,\"shape\":[64, 64],\"dtype\":\"torch.float32\"");
  auto report = run_cli_json(args(a, b, "--json --rtol 0.5"), 1);
  ASSERT_EQ(report["first_divergence"]["stats"].size(), 1u);
  EXPECT_EQ(report["first_divergence"]["stats"][0]["stat"], "numel");
  b = one("b4.jsonl", "\"numel\":4096,\"shape\":[64,65],\"dtype\":\"torch.int32\"");
  report = run_cli_json(args(a, b, "--json --rtol 0.5"), 1);
  ASSERT_EQ(report["first_divergence"]["stats"].size(), 2u);
  EXPECT_EQ(report["first_divergence"]["stats"][0]["stat"], "shape");
  EXPECT_EQ(report["first_divergence"]["stats"][0]["b"], nlohmann::json::array({64, 65}));
  EXPECT_EQ(report["first_divergence"]["stats"][1]["b"], "torch.int32");
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
  // sum is compared on the tensor's scale, abs_mean * numel (about 770 here):
  // 50 is 6.5% of it, beyond bf16's tolerance.
  const auto a = write("a.jsonl", model_run([](ordered_json& r, int, int block) {
                         if (block == 5) r["sum"] = r["sum"].get<double>() + 50.0;
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

// A record of one tensor as the sink writes it with the parity profile's
// statistics, for the tests of the default tolerances below.
ordered_json tensor_record(const std::string& module, int step, int seq, double abs_mean,
                           double sum, const char* dtype = nullptr) {
  ordered_json r = activation_record(module, "out", step, seq);
  r["abs_mean"] = abs_mean;
  r["mean"] = sum / 4096.0;  // numel 4096: the sink's mean is sum / numel
  r["std"] = abs_mean * 1.25;
  r["min"] = -abs_mean * 4;
  r["max"] = abs_mean * 4.5;
  r["sum"] = sum;
  if (dtype != nullptr) r["dtype"] = dtype;
  return r;
}

TEST_F(DiffCommand, TolerancesFollowTheRecordsDtype) {
  auto pair = [&](const std::string& name, const char* dtype_a, const char* dtype_b) {
    const auto a =
        write(name + "_a.jsonl",
              std::vector<ordered_json>{tensor_record("blocks.0", 0, 0, 1.01, 40, dtype_a)});
    const auto b =
        write(name + "_b.jsonl",
              std::vector<ordered_json>{tensor_record("blocks.0", 0, 0, 1.00, 40, dtype_b)});
    return std::pair{a, b};
  };
  // 1% apart: within bf16's rounding, far beyond fp32's.
  auto [a, b] = pair("bf16", "torch.bfloat16", "torch.bfloat16");
  auto report = run_cli_json(args(a, b, "--json"), 0);
  ASSERT_EQ(report["tolerances"].size(), 1u);
  EXPECT_EQ(report["tolerances"][0]["dtype"], "bfloat16");
  EXPECT_DOUBLE_EQ(report["tolerances"][0]["rtol"].get<double>(), 1.6e-2);
  EXPECT_EQ(run_cli(args(a, b, "--dtype float32")).exit_code, 1);
  EXPECT_EQ(run_cli(args(a, b, "--rtol 1e-3")).exit_code, 1);

  // No dtype on either side: fp32.
  std::tie(a, b) = pair("none", nullptr, nullptr);
  report = run_cli_json(args(a, b, "--json"), 1);
  EXPECT_EQ(report["first_divergence"]["module"], "blocks.0");
  EXPECT_EQ(report["tolerances"][0]["dtype"], "float32 (no dtype in the records)");
  EXPECT_EQ(run_cli(args(a, b, "--dtype bf16")).exit_code, 0);
  EXPECT_EQ(run_cli(args(a, b, "--dtype torch.bfloat16")).exit_code, 0);

  // fp32 records: 1e-6 apart is rounding, 1e-4 is not.
  const auto c = write("c.jsonl", std::vector<ordered_json>{tensor_record(
                                      "blocks.0", 0, 0, 1.000001, 40, "torch.float32")});
  const auto d = write("d.jsonl", std::vector<ordered_json>{tensor_record("blocks.0", 0, 0, 1.0001,
                                                                          40, "torch.float32")});
  const auto e =
      write("e.jsonl",
            std::vector<ordered_json>{tensor_record("blocks.0", 0, 0, 1.0, 40, "torch.float32")});
  EXPECT_EQ(run_cli(args(c, e)).exit_code, 0);
  EXPECT_EQ(run_cli(args(d, e)).exit_code, 1);

  // Written on one side only, it still decides.
  std::tie(a, b) = pair("one_side", "torch.bfloat16", nullptr);
  EXPECT_EQ(run_cli(args(a, b)).exit_code, 0);

  const auto bad = run_cli(args(a, b, "--dtype bfloat17"));
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.output.find("bfloat17"), std::string::npos) << bad.output;
}

TEST_F(DiffCommand, NearZeroSumsAreComparedOnTheTensorsScale) {
  // The case: every block agrees to fp32 rounding except blocks.3,
  // 1% off; blocks.1's sum is near zero (cancellation), so rounding moves it
  // by 50% of itself. The first divergence is blocks.3, never blocks.1's sum.
  auto run = [](double scale3, double sum1, bool with_mean) {
    std::vector<ordered_json> records;
    int seq = 0;
    for (int step = 0; step < 2; ++step) {
      for (int b = 0; b < 6; ++b) {
        const double s = b == 3 ? scale3 : 1.0;
        auto r = tensor_record("blocks." + std::to_string(b), step, seq++, 0.8 * s,
                               (b == 1 ? sum1 : 100.0 + b) * s);
        if (!with_mean) r.erase("mean");
        records.push_back(r);
      }
    }
    return records;
  };
  const auto ref = write("ref.jsonl", run(1.0, 0.02, true));
  const auto port = write("port.jsonl", run(1.01, 0.03, true));
  auto report = run_cli_json(args(port, ref, "--json"), 1);
  EXPECT_EQ(report["first_divergence"]["module"], "blocks.3");
  EXPECT_EQ(report["first_divergence"]["step"], 0);
  for (const auto& s : report["stats"]) {
    if (s["stat"] == "sum" || s["stat"] == "mean") {
      EXPECT_EQ(s["divergent"], 2) << s.dump();  // blocks.3 at both steps, nothing else
    }
  }
  for (const auto& s : report["first_divergence"]["stats"]) {
    if (s["stat"] != "sum") continue;
    EXPECT_TRUE(s["tensor_scale"].get<bool>());
    // Against abs_mean * numel, numel = sum / mean = 4096.
    EXPECT_NEAR(s["scale"].get<double>(), 0.8 * 1.01 * 4096, 1e-6);
  }
  // A faithful port with only the near-zero sum moved: equal.
  const auto faithful = write("faithful.jsonl", run(1.0, 0.03, true));
  EXPECT_EQ(run_cli(args(faithful, ref)).exit_code, 0);

  // numel from `numel` or `shape` when there is no mean.
  auto without_mean = [&](const std::string& name, double sum1, const char* key) {
    auto records = run(1.0, sum1, false);
    for (auto& r : records) {
      if (std::string(key) == "numel") r["numel"] = 4096;
      if (std::string(key) == "shape") r["shape"] = {1, 64, 64};
    }
    return write(name, records);
  };
  EXPECT_EQ(run_cli(args(without_mean("n1.jsonl", 0.03, "numel"),
                         without_mean("n2.jsonl", 0.02, "numel")))
                .exit_code,
            0);
  EXPECT_EQ(run_cli(args(without_mean("s1.jsonl", 0.03, "shape"),
                         without_mean("s2.jsonl", 0.02, "shape")))
                .exit_code,
            0);
  // abs_mean and sum alone (the sink's default stats) cannot give numel: the
  // sum falls back to its own value, and the table says so.
  const auto text =
      run_cli(args(without_mean("o1.jsonl", 0.03, "none"), without_mean("o2.jsonl", 0.02, "none")));
  EXPECT_EQ(text.exit_code, 1);
  EXPECT_NE(text.output.find("against its own value for 12 records"), std::string::npos)
      << text.output;
}

TEST_F(DiffCommand, FirstDivergenceIsTheEarliestStepAndTopListsTheNextOnes) {
  // A has no seq and its file holds step 1 before step 0 (files of two runs
  // concatenated, or a Python hook's order): blocks.5 of step 1 comes first
  // in the file, blocks.2 of step 0 is the earlier divergence.
  auto records = [](bool with_seq, bool perturbed) {
    std::vector<ordered_json> out;
    for (int step : {1, 0}) {
      for (int b = 0; b < 8; ++b) {
        auto r = tensor_record("blocks." + std::to_string(b), step, step * 8 + b, 1.0 + 0.1 * b,
                               50.0 + b);
        if (!with_seq) r.erase("seq");
        if (perturbed && ((step == 1 && b >= 5) || (step == 0 && b >= 2))) {
          r["abs_mean"] = r["abs_mean"].get<double>() * (1.02 + 0.01 * b);
        }
        out.push_back(r);
      }
    }
    return out;
  };
  const auto a = write("a.jsonl", records(false, true));
  for (bool b_seq : {false, true}) {
    const auto b = write("b.jsonl", records(b_seq, false));
    const auto report = run_cli_json(args(a, b, "--json --top 3"), 1);
    const auto& first = report["first_divergence"];
    EXPECT_EQ(first["module"], "blocks.2") << b_seq;
    EXPECT_EQ(first["step"], 0) << b_seq;
    ASSERT_EQ(first["stats"].size(), 1u);
    EXPECT_EQ(first["stats"][0]["stat"], "abs_mean");
    EXPECT_DOUBLE_EQ(first["stats"][0]["b"].get<double>(), 1.2);
    EXPECT_DOUBLE_EQ(first["stats"][0]["a"].get<double>(), 1.2 * 1.04);
    const auto& next = report["next_divergences"];
    ASSERT_EQ(next.size(), 3u);
    for (int i = 0; i < 3; ++i) {
      EXPECT_EQ(next[i]["module"], "blocks." + std::to_string(3 + i));
      EXPECT_EQ(next[i]["step"], 0);
    }
  }
  const auto b = write("b2.jsonl", records(true, false));
  const auto out = run_cli(args(a, b, "--top 2")).output;
  const auto first = out.find("module blocks.2  tensor out  step 0");
  const auto next = out.find("Next 2 of 8 divergent records after it:");
  ASSERT_NE(first, std::string::npos) << out;
  ASSERT_NE(next, std::string::npos) << out;
  EXPECT_LT(first, next);
  EXPECT_NE(out.find("blocks.3", next), std::string::npos);
}

TEST_F(DiffCommand, RenamedModulesAreAlignedOrExplained) {
  auto run = [](const std::string& prefix, const std::string& part, double perturb4) {
    std::vector<ordered_json> out;
    int seq = 0;
    for (int step = 0; step < 2; ++step) {
      for (int b = 0; b < 6; ++b) {
        out.push_back(tensor_record(prefix + "blocks." + std::to_string(b) + "." + part, step,
                                    seq++, (1.0 + 0.1 * b) * (b == 4 ? perturb4 : 1.0), 10.0 + b));
      }
    }
    return out;
  };
  const auto ref = write("ref.jsonl", run("", "attn", 1.0));
  const auto port = write("port.jsonl", run("transformer.", "self_attn", 1.05));

  // Nothing matches: no divergence is declared; the closest names are shown.
  auto r = run_cli_stdout(args(port, ref, "--json"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  auto report = nlohmann::json::parse(r.output);
  EXPECT_TRUE(report["names_mismatch"].get<bool>());
  EXPECT_TRUE(report["first_divergence"].is_null());
  ASSERT_GE(report["closest_names"].size(), 1u);
  EXPECT_EQ(report["closest_names"][0]["a"], "transformer.blocks.0.self_attn");
  EXPECT_EQ(report["closest_names"][0]["b"], "blocks.0.attn");
  const auto text = run_cli(args(port, ref));
  EXPECT_EQ(text.exit_code, 2);
  EXPECT_NE(text.output.find("the module names differ"), std::string::npos) << text.output;
  EXPECT_EQ(text.output.find("First divergence"), std::string::npos) << text.output;

  // One difference left: the hint names the option that fixes it.
  report = run_cli_json(args(port, ref, "--json --map self_attn=attn"), 2);
  EXPECT_EQ(report["closest_names"][0]["hint"], "--strip-prefix A=transformer.");
  report = run_cli_json(args(port, ref, "--json --strip-prefix A=transformer."), 2);
  EXPECT_EQ(report["closest_names"][0]["hint"], "--map self_attn=attn");

  // Both: aligned, and the perturbed block is found under the reference's names.
  report =
      run_cli_json(args(port, ref, "--json --strip-prefix A=transformer. --map self_attn=attn"), 1);
  EXPECT_FALSE(report["names_mismatch"].get<bool>());
  EXPECT_EQ(report["totals"]["matched_records"], 12);
  EXPECT_EQ(report["first_divergence"]["module"], "blocks.4.attn");
  EXPECT_EQ(report["first_divergence"]["step"], 0);
  // A prefix without a side is stripped from both files.
  const auto faithful = write("faithful.jsonl", run("transformer.", "attn", 1.0));
  EXPECT_EQ(run_cli(args(faithful, ref, "--strip-prefix transformer.")).exit_code, 0);
  EXPECT_EQ(run_cli(args(faithful, ref, "--map nonsense")).exit_code, 2);
}

TEST_F(DiffCommand, MaxRelErrorIsTheMaximumOverEveryComparedValue) {
  // 1% apart in bf16: within tolerance, and the table still says how close.
  const auto a =
      write("a.jsonl",
            std::vector<ordered_json>{tensor_record("blocks.0", 0, 0, 1.01, 40, "torch.bfloat16")});
  const auto b =
      write("b.jsonl",
            std::vector<ordered_json>{tensor_record("blocks.0", 0, 0, 1.00, 40, "torch.bfloat16")});
  const auto report = run_cli_json(args(a, b, "--json"), 0);
  bool seen = false;
  for (const auto& s : report["stats"]) {
    if (s["stat"] != "abs_mean") continue;
    seen = true;
    EXPECT_EQ(s["divergent"], 0);
    EXPECT_NEAR(s["max_rel_error"].get<double>(), 0.01 / 1.01, 1e-9);
  }
  EXPECT_TRUE(seen);
  const auto text = run_cli(args(a, b)).output;
  const auto table = text.find("By statistic:");
  ASSERT_NE(table, std::string::npos) << text;
  const auto row = text.find("abs_mean", table);
  const auto line = text.substr(row, text.find('\n', row) - row);
  EXPECT_NE(line.find("0.0099"), std::string::npos) << line;
}

TEST_F(DiffCommand, InputThatIsNotAnActivationTraceExitsTwo) {
  const auto good = write("good.jsonl", model_run());
  struct Case {
    std::string name;
    std::string why;
  };
  std::vector<Case> cases;
  write("empty.jsonl", "");
  cases.push_back({"empty.jsonl", "empty file"});
  write("blank.jsonl", "\n\n  \n");
  cases.push_back({"blank.jsonl", "no activation records"});
  // A torch_profiler / timeline trace, written whole on one line and one
  // event per line.
  write_gzip(dir_.file("trace.json.gz"),
             "{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"aten::mm\",\"ts\":1,\"dur\":2}]}\n");
  cases.push_back({"trace.json.gz", "Chrome/Perfetto trace"});
  write_gzip(dir_.file("events.json.gz"),
             "{\"traceEvents\":[\n{\"ph\":\"X\",\"name\":\"aten::mm\",\"ts\":1,\"dur\":2},\n]}\n");
  cases.push_back({"events.json.gz", "Chrome/Perfetto trace"});
  write("event.jsonl", "{\"ph\":\"X\",\"name\":\"aten::mm\",\"ts\":1,\"dur\":2}\n");
  cases.push_back({"event.jsonl", "Chrome/Perfetto trace"});
  std::string binary =
      "\x7f"
      "ELF";
  for (int i = 0; i < 4000; ++i) binary += static_cast<char>((i * 37) % 256);
  write("binary.bin", binary);
  cases.push_back({"binary.bin", "binary.bin:1:"});
  // A line far longer than any record: refused, not buffered.
  write("long.jsonl",
        "{\"module\":\"m\",\"tensor\":\"out\",\"note\":\"" + std::string(3 << 20, 'x') + "\"}\n");
  cases.push_back({"long.jsonl", "longer than 1 MiB"});
  for (const auto& c : cases) {
    const auto r = run_cli(args(good, dir_.file(c.name)));
    EXPECT_EQ(r.exit_code, 2) << c.name << "\n" << r.output;
    EXPECT_NE(r.output.find(c.why), std::string::npos) << c.name << "\n" << r.output;
    EXPECT_NE(r.output.find(c.name), std::string::npos) << r.output;
  }
  // Endless inputs (a device, a FIFO fed without end) are no files: refused
  // before a byte is read, in bounded memory and time.
  const std::string bounded = "ulimit -v 1048576 && timeout 60 " + shell_quoted(REGIONTRACE_CLI);
  auto r = run_command(bounded + " " + args(good, "/dev/zero"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("/dev/zero: is not a regular file"), std::string::npos) << r.output;
  const auto fifo = dir_.file("fifo");
  ASSERT_EQ(run_command("mkfifo " + shell_quoted(fifo)).exit_code, 0);
  // No writer: an open() for reading would wait for one for ever.
  r = run_command(bounded + " " + args(good, fifo));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find(fifo + ": is not a regular file"), std::string::npos) << r.output;
}

// Issue 13: an integer beyond 64 bits is valid JSON (a hash from a Python
// hook); it was reported as malformed. It compares exactly, as text.
TEST_F(DiffCommand, IntegersBeyondSixtyFourBitsCompareAsText) {
  const std::string big = "123456789012345678901234567890";
  const std::string line_a = "{\"module\":\"m\",\"tensor\":\"out\",\"step\":0,\"hash\":" + big +
                             ",\"neg\":-99999999999999999999,\"abs_mean\":1.5}\n";
  const auto a = write("a.jsonl", line_a);
  const auto same = write("same.jsonl", line_a);
  const auto other = write(
      "other.jsonl",
      "{\"module\":\"m\",\"tensor\":\"out\",\"step\":0,\"hash\":" + big.substr(0, big.size() - 1) +
          "1,\"neg\":-99999999999999999999,\"abs_mean\":1.5}\n");
  const auto equal = run_cli(args(a, same));
  EXPECT_EQ(equal.exit_code, 0) << equal.output;
  const nlohmann::json d = run_cli_json(args(a, other, "--json"), 1);
  EXPECT_EQ(d["equal"], false) << d.dump(1);
  const auto& stats = d["first_divergence"]["stats"];
  ASSERT_EQ(stats.size(), 1u) << d.dump(1);
  EXPECT_EQ(stats[0]["stat"], "hash");
  EXPECT_EQ(stats[0]["a"], big);  // digit for digit
  EXPECT_EQ(stats[0]["b"], big.substr(0, big.size() - 1) + "1");
}

// Issue 35: an fp32 reference against a bf16 port. Each record of the port
// is the reference's rounded the way bf16 rounds a statistic: averages (abs_mean,
// std, mean, sum) by a fraction of bf16's unit roundoff, extremes (min, max)
// by up to one (measured: parity example's stack, fp32 vs bf16). `perturb`
// scales blocks.2 and everything after it, as a bug there spreads.
std::vector<ordered_json> precision_run(const char* dtype, bool rounded, double perturb) {
  const double u = std::ldexp(1.0, -8);
  std::vector<ordered_json> out;
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  int seq = 0;
  for (int step = 0; step < 3; ++step) {
    for (int i = 0; i < 16; ++i) {
      const std::string module = i == 0    ? "embed"
                                 : i == 15 ? "head"
                                           : "blocks." + std::to_string(i - 1);
      ordered_json r = activation_record(module, "out", step, seq++);
      const double s = (i >= 3 ? perturb : 1.0) * (1.0 + 0.05 * i + 0.01 * step);
      auto noisy = [&](double v, double fraction) {
        const double d = unit(rng) * fraction * u;  // drawn on both sides: same sequence
        return rounded ? v * (1 + d) : v;
      };
      r["abs_mean"] = noisy(0.8 * s, 0.2);
      r["mean"] = noisy(0.01 * s, 0.2);
      r["std"] = noisy(1.1 * s, 0.2);
      r["min"] = noisy(-4.0 * s, 1.0);
      r["max"] = noisy(4.5 * s, 1.0);
      r["sum"] = noisy(0.01 * s * 4096, 0.2);
      r["numel"] = 4096;
      r["dtype"] = dtype;
      out.push_back(r);
    }
  }
  return out;
}

TEST_F(DiffCommand, Bf16RoundingAgainstFp32IsBelowBf16Resolution) {
  const auto ref = write("ref.jsonl", precision_run("torch.float32", false, 1.0));
  const auto port = write("port.jsonl", precision_run("torch.bfloat16", true, 1.0));
  const auto text = run_cli(args(ref, port));
  EXPECT_EQ(text.exit_code, 0) << text.output;
  const auto note = text.output.find("dtype differs");
  ASSERT_NE(note, std::string::npos) << text.output;
  EXPECT_EQ(text.output.find("dtype differs", note + 1), std::string::npos) << text.output;
  EXPECT_NE(text.output.find("below bf16 resolution"), std::string::npos) << text.output;

  const auto report = run_cli_json(args(ref, port, "--json"), 0);
  EXPECT_TRUE(report["equal"].get<bool>()) << report.dump(1);
  ASSERT_EQ(report["dtype_mismatch"].size(), 1u) << report.dump(1);
  EXPECT_EQ(report["dtype_mismatch"][0]["a"], "float32");
  EXPECT_EQ(report["dtype_mismatch"][0]["b"], "bfloat16");
  EXPECT_EQ(report["dtype_mismatch"][0]["records"], 48);
  EXPECT_DOUBLE_EQ(report["dtype_mismatch"][0]["noise"].get<double>(), std::ldexp(1.0, -8));
  const auto& largest = report["largest_noise_ratio"];
  ASSERT_TRUE(largest.is_object()) << report.dump(1);
  EXPECT_LT(largest["noise_ratio"].get<double>(), 1.0);
  EXPECT_EQ(largest["verdict"], "below resolution");
}

TEST_F(DiffCommand, OnePercentBugInABf16PortIsNamedAboveBf16Noise) {
  const auto ref = write("ref.jsonl", precision_run("torch.float32", false, 1.0));
  const auto port = write("port.jsonl", precision_run("torch.bfloat16", true, 1.01));
  const auto report = run_cli_json(args(port, ref, "--json"), 1);
  const auto& first = report["first_divergence"];
  EXPECT_EQ(first["module"], "blocks.2") << report.dump(1);
  EXPECT_EQ(first["step"], 0);
  // 1% = 2.5 bf16 unit roundoffs, give or take the rounding drawn on top.
  EXPECT_GT(first["noise_ratio"].get<double>(), 2.0) << first.dump(1);
  EXPECT_LT(first["noise_ratio"].get<double>(), 3.0) << first.dump(1);
  for (const auto& s : first["stats"]) {
    EXPECT_NE(s["stat"], "dtype") << first.dump(1);
    EXPECT_TRUE(s["noise_ratio"].is_number()) << s.dump();
  }
  EXPECT_EQ(report["totals"]["divergent_records"], 3 * 13);  // blocks.2 on, every step

  const auto text = run_cli(args(port, ref));
  EXPECT_EQ(text.exit_code, 1) << text.output;
  const auto first_at = text.output.find("First divergence");
  ASSERT_NE(first_at, std::string::npos) << text.output;
  EXPECT_NE(text.output.find("module blocks.2  tensor out  step 0", first_at), std::string::npos)
      << text.output;
  const auto summary = text.output.find("blocks.2 out step 0: max rel error 0.0");
  ASSERT_NE(summary, std::string::npos) << text.output;
  const auto line = text.output.substr(summary, text.output.find('\n', summary) - summary);
  EXPECT_NE(line.find("x bf16 noise"), std::string::npos) << line;
  EXPECT_EQ(text.output.find("module embed"), std::string::npos) << text.output;
}

TEST_F(DiffCommand, TenthOfAPercentInABf16PortIsBelowBf16Resolution) {
  const auto ref = write("ref.jsonl", precision_run("torch.float32", false, 1.0));
  const auto port = write("port.jsonl", precision_run("torch.bfloat16", true, 1.001));
  const auto text = run_cli(args(port, ref));
  EXPECT_EQ(text.exit_code, 0) << text.output;
  EXPECT_NE(text.output.find("below bf16 resolution"), std::string::npos) << text.output;
  EXPECT_EQ(text.output.find("EQUAL within tolerance\n"), std::string::npos) << text.output;
  const auto report = run_cli_json(args(port, ref, "--json"), 0);
  EXPECT_EQ(report["largest_noise_ratio"]["verdict"], "below resolution") << report.dump(1);
  EXPECT_GT(report["largest_noise_ratio"]["noise_ratio"].get<double>(), 0.2);
}

}  // namespace
}  // namespace regiontrace::test
