// JSONL schema v1: each record parsed back with a real JSON parser.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "activation_jsonl.hpp"

namespace regiontrace::activation {
namespace {

TensorStats sample_stats() {
  TensorStats s;
  s.numel = 6;
  s.shape = {2, 3};
  s.dtype = "torch.bfloat16";
  s.device = "cpu";
  s.sum = -5.678;
  s.mean = 0.1;
  s.abs_mean = 1.234;
  s.min = -std::numeric_limits<double>::infinity();
  s.max = std::numeric_limits<double>::quiet_NaN();
  s.absmax = std::numeric_limits<double>::infinity();
  s.std = std::nullopt;
  s.rms = 1e-300;
  s.l2 = 3.0;
  s.nan_count = 1;
  s.inf_count = 2;
  s.zero_count = 0;
  s.hash = 0x00ab0000000000cdull;
  return s;
}

nlohmann::json format(const ActivationRecord& r, const std::vector<std::string>& stats,
                      int rank = 0) {
  const RecordFormatter f(StatSet::parse(stats), rank);
  std::string line;
  f.append(line, r);
  EXPECT_EQ(line.back(), '\n');
  EXPECT_EQ(line.find('\n'), line.size() - 1) << "one record, one line";
  return nlohmann::json::parse(line);
}

TEST(RecordFormat, DefaultRecordMatchesThePythonKeys) {
  ActivationRecord r("block.layers.0", "out", "", 0, sample_stats());
  r.seq = 12;
  const nlohmann::json j = format(r, {"abs_mean", "sum"}, 3);
  EXPECT_EQ(j["v"], 1);
  EXPECT_EQ(j["module"], "block.layers.0");
  EXPECT_EQ(j["tensor"], "out");
  EXPECT_EQ(j["step"], 0);
  EXPECT_EQ(j["rank"], 3);
  EXPECT_EQ(j["seq"], 12);
  EXPECT_EQ(j["abs_mean"], 1.234);
  EXPECT_EQ(j["sum"], -5.678);
  EXPECT_FALSE(j.contains("op"));
  EXPECT_EQ(j.size(), 8u) << j.dump();
}

TEST(RecordFormat, KeysComeInSchemaThenRequestedOrder) {
  ActivationRecord r("m", "out", "", 0, sample_stats());
  const RecordFormatter f(StatSet::parse({"sum", "abs_mean", "shape"}), 0);
  std::string line;
  f.append(line, r);
  std::vector<std::string> keys;
  const nlohmann::ordered_json j = nlohmann::ordered_json::parse(line);
  for (auto it = j.begin(); it != j.end(); ++it) keys.push_back(it.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"v", "module", "tensor", "step", "rank", "seq", "sum",
                                            "abs_mean", "shape"}));
}

TEST(RecordFormat, EveryStatisticAndItsSpelling) {
  ActivationRecord r("m", "out[1]", "", kNoStep, sample_stats());
  const nlohmann::json j = format(r, {"all"});
  EXPECT_TRUE(j["step"].is_null());
  EXPECT_EQ(j["mean"], 0.1);
  EXPECT_EQ(j["min"], "-Infinity");
  EXPECT_EQ(j["max"], "NaN");
  EXPECT_EQ(j["absmax"], "Infinity");
  EXPECT_TRUE(j["std"].is_null());
  EXPECT_EQ(j["rms"], 1e-300);
  EXPECT_EQ(j["l2"], 3.0);
  EXPECT_EQ(j["nan_count"], 1);
  EXPECT_EQ(j["inf_count"], 2);
  EXPECT_EQ(j["zero_count"], 0);
  EXPECT_EQ(j["numel"], 6);
  EXPECT_EQ(j["shape"], nlohmann::json::array({2, 3}));
  EXPECT_EQ(j["dtype"], "torch.bfloat16");
  EXPECT_EQ(j["device"], "cpu");
  EXPECT_EQ(j["hash"], "00ab0000000000cd");
}

TEST(RecordFormat, FloatsAreShortestRoundTrip) {
  TensorStats s;
  s.sum = 0.1;
  s.mean = 1.0 / 3.0;
  s.abs_mean = 123456789.0;
  ActivationRecord r("m", "out", "", 1, std::move(s));
  const RecordFormatter f(StatSet::parse({"sum", "mean", "abs_mean"}), 0);
  std::string line;
  f.append(line, r);
  EXPECT_NE(line.find("\"sum\":0.1,"), std::string::npos) << line;
  EXPECT_NE(line.find("\"abs_mean\":123456789}"), std::string::npos) << line;
  EXPECT_EQ(nlohmann::json::parse(line)["mean"].get<double>(), 1.0 / 3.0);
}

TEST(RecordFormat, OpRecordsNameTheOp) {
  ActivationRecord r("blocks.0", "out", "aten::addmm", 2, sample_stats());
  const nlohmann::json j = format(r, {"sum"});
  EXPECT_EQ(j["tensor"], "aten::addmm:out");
  EXPECT_EQ(j["op"], "aten::addmm");
  EXPECT_EQ(j["module"], "blocks.0");
}

TEST(RecordFormat, FailedStatisticsAreErrorStrings) {
  TensorStats s;
  s.numel = 4;
  s.shape = {4};
  s.dtype = "torch.complex64";
  s.error = "no statistics for complex \"torch.complex64\"";
  s.hash_error = "meta tensors hold no data";
  ActivationRecord r("m", "out", "", 0, std::move(s));
  const nlohmann::json j = format(r, {"sum", "std", "nan_count", "shape", "hash"});
  EXPECT_EQ(j["sum"], "<error: no statistics for complex \"torch.complex64\">");
  EXPECT_EQ(j["nan_count"], j["sum"]);
  EXPECT_EQ(j["shape"], nlohmann::json::array({4}));
  EXPECT_EQ(j["hash"], "<error: meta tensors hold no data>");
}

TEST(RecordFormat, NamesAreEscaped) {
  ActivationRecord r("weird\"module\\\n", "out.k\te", "", 0, TensorStats{});
  const nlohmann::json j = format(r, {"numel"});
  EXPECT_EQ(j["module"], "weird\"module\\\n");
  EXPECT_EQ(j["tensor"], "out.k\te");
}

// Names are checked eight bytes at a time: every special character at every
// position of names of every length up to 40, and UTF-8 left as it is.
TEST(RecordFormat, EveryPositionOfANameIsCheckedForEscaping) {
  const std::string specials[] = {"\"", "\\", "\n", "\t", std::string(1, '\x01'), "\x1f"};
  for (std::size_t length = 1; length <= 40; ++length) {
    for (std::size_t at = 0; at < length; ++at) {
      for (const std::string& c : specials) {
        std::string name(length, 'a');
        name[at] = c[0];
        ActivationRecord r(name, "out", "", 0, TensorStats{});
        ASSERT_EQ(format(r, {"numel"})["module"], name) << "length " << length << " at " << at;
      }
    }
  }
  const std::string utf8 = "bl\xc3\xb6cke.\xe2\x80\x9cattn\xe2\x80\x9d.\xf0\x9f\x94\xa5";
  ActivationRecord r(utf8, "out", "", 0, TensorStats{});
  const RecordFormatter f(StatSet::parse({"numel"}), 0);
  std::string line;
  f.append(line, r);
  EXPECT_NE(line.find("\"" + utf8 + "\""), std::string::npos) << line;
}

TEST(RecordFormat, SummaryLine) {
  const RecordFormatter f(StatSet::parse({"sum"}), 2);
  std::string line;
  f.append_summary(line, TraceSummary{10, 3});
  const nlohmann::json j = nlohmann::json::parse(line);
  EXPECT_EQ(j["v"], 1);
  EXPECT_EQ(j["summary"]["records"], 10);
  EXPECT_EQ(j["summary"]["dropped"], 3);
  EXPECT_EQ(j["summary"]["rank"], 2);
  EXPECT_FALSE(j.contains("module"));
}

TEST(StatSetParse, AllAndRepeats) {
  const StatSet s = StatSet::parse({"sum", "all", "sum"});
  EXPECT_EQ(s.order().size(), 17u);
  EXPECT_EQ(s.order().front(), Stat::kSum);
  EXPECT_TRUE(s.needs_numeric());
  EXPECT_TRUE(s.needs_hash());
  const StatSet shape_only = StatSet::parse({"shape", "dtype"});
  EXPECT_FALSE(shape_only.needs_numeric());
  EXPECT_FALSE(shape_only.needs_hash());
  EXPECT_THROW(StatSet::parse({"median"}), std::invalid_argument);
}

}  // namespace
}  // namespace regiontrace::activation
