// Numbers in the JSONL are exact: every double statistic parses back to the
// same bits (bf16 and fp16 statistics, whose values are floats, included),
// NaN and infinities follow the json_writer.hpp strings, counts are exact
// integers, and the text is what std::to_chars writes (the shortest).
#include <gtest/gtest.h>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "activation_jsonl.hpp"
#include "number_text.hpp"

namespace regiontrace::activation {
namespace {

std::uint64_t bits_of(double v) {
  std::uint64_t b;
  std::memcpy(&b, &v, sizeof(b));
  return b;
}

double from_bits(std::uint64_t b) {
  double v;
  std::memcpy(&v, &b, sizeof(v));
  return v;
}

float bf16_to_float(std::uint16_t bits) {
  const std::uint32_t wide = static_cast<std::uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &wide, sizeof(f));
  return f;
}

// Doubles of every kind a statistic can hold: any bit pattern, short
// decimals, integers past 2^53, powers of ten, subnormals, and the float
// values of bf16 and fp16 data.
std::vector<double> sample_doubles(std::size_t count) {
  std::mt19937_64 rng(20261201);
  std::vector<double> out = {0.0,
                             -0.0,
                             1.0,
                             -1.0,
                             0.1,
                             1e-5,
                             1e-4,
                             1e15,
                             1e16,
                             1e21,
                             1e22,
                             1e23,
                             123456789012345680.0,
                             9007199254740993.0,
                             std::numeric_limits<double>::min(),
                             std::numeric_limits<double>::denorm_min(),
                             std::numeric_limits<double>::max(),
                             std::numeric_limits<double>::lowest(),
                             std::numeric_limits<double>::epsilon()};
  auto add = [&out](double v) {
    if (std::isfinite(v)) out.push_back(v);
  };
  while (out.size() < count) {
    const std::uint64_t r = rng();
    add(from_bits(r));
    add(std::ldexp(static_cast<double>(r >> 11), -static_cast<int>(r % 90)));
    add(static_cast<double>(static_cast<std::int64_t>(r) >> (r % 64)));
    add(std::pow(10.0, static_cast<int>(r % 630) - 320));
    add(static_cast<double>(r % 1000000) / 1000.0);
    add(bf16_to_float(static_cast<std::uint16_t>(r >> 48)));
    const float f16 = static_cast<float>(
        std::ldexp(static_cast<double>((r >> 20) % 2048), static_cast<int>((r >> 8) % 40) - 24));
    add((r & 1) != 0 ? -f16 : f16);
  }
  return out;
}

TEST(RecordNumbers, DoublesAreWrittenAsToCharsWritesThem) {
  for (double v : sample_doubles(200000)) {
    char expected[64];
    char got[64];
    const auto e = std::to_chars(expected, expected + sizeof(expected), v);
    char* g = write_double(got, v);
    ASSERT_LE(g - got, kMaxDoubleChars);
    ASSERT_EQ(std::string(expected, e.ptr), std::string(got, g))
        << "bits " << std::hex << bits_of(v);
    *g = '\0';
    ASSERT_EQ(bits_of(std::strtod(got, nullptr)), bits_of(v)) << got;
  }
}

std::string to_chars_text(double v) {
  char text[64];
  return std::string(text, std::to_chars(text, text + sizeof(text), v).ptr);
}

std::string written_text(double v) {
  char text[kDoubleScratch + 8];
  return std::string(text, write_double(text, v));
}

// Doubles with a short exact decimal expansion (m / 2^k, below 10^15 once
// multiplied by 10^k) skip Dragonbox: both sides of where that stops, for
// every k, and the small integers written directly.
TEST(RecordNumbers, ShortExactValuesAreWrittenAsToCharsWritesThem) {
  std::mt19937_64 rng(15);
  std::vector<double> values;
  std::uint64_t five_to_k = 1;
  for (int k = 0; k <= 24; ++k, five_to_k *= 5) {
    const std::uint64_t limit = 999999999999999ull / five_to_k;  // largest m below 10^15 / 5^k
    for (std::uint64_t m : {limit - 2, limit - 1, limit, limit + 1, limit + 2, std::uint64_t{1},
                            std::uint64_t{3}, limit / 2, rng() % (limit + 3) + 1}) {
      if (m == 0) continue;
      for (int extra = 0; extra <= 2; ++extra) {
        values.push_back(std::ldexp(static_cast<double>(m), -k - extra));
      }
    }
  }
  for (double v : {99999.0, 100000.0, 99999.5, 65536.0, 1.0, 2.0, 10.0, 0.5, 0.25, 1e-5}) {
    values.push_back(v);
  }
  for (int i = 0; i < 100000; ++i) {
    const std::uint64_t r = rng();
    values.push_back(
        std::ldexp(static_cast<double>(r >> (11 + r % 53)), -static_cast<int>(r % 40)));
  }
  for (double v : values) {
    for (double signed_v : {v, -v}) {
      ASSERT_EQ(written_text(signed_v), to_chars_text(signed_v))
          << "bits " << std::hex << bits_of(signed_v);
    }
  }
}

TEST(RecordNumbers, IntegersAreWrittenAsToCharsWritesThem) {
  std::vector<std::uint64_t> values = {0, std::numeric_limits<std::uint64_t>::max()};
  for (std::uint64_t p = 1; p <= 1000000000000000000ull; p *= 10) {
    values.push_back(p - 1);
    values.push_back(p);
    values.push_back(p + 1);
  }
  values.push_back(10000000000000000000ull);
  std::mt19937_64 rng(16);
  for (int i = 0; i < 100000; ++i) values.push_back(rng() >> (rng() % 64));
  for (std::uint64_t v : values) {
    char expected[32];
    char got[32];
    ASSERT_EQ(std::string(got, write_uint(got, v)),
              std::string(expected, std::to_chars(expected, expected + 32, v).ptr));
    const auto i = static_cast<std::int64_t>(v);
    ASSERT_EQ(std::string(got, write_int(got, i)),
              std::string(expected, std::to_chars(expected, expected + 32, i).ptr));
  }
}

// The raw text of a top-level key's value in one record line.
std::string raw_value(const std::string& line, const std::string& key) {
  const std::string marker = "\"" + key + "\":";
  const std::size_t at = line.find(marker);
  if (at == std::string::npos) return {};
  const std::size_t begin = at + marker.size();
  const std::size_t end = line.find_first_of(",}", begin);
  return line.substr(begin, end - begin);
}

void expect_exact(const std::string& line, const nlohmann::json& j, const std::string& key,
                  const std::optional<double>& value) {
  const std::string text = raw_value(line, key);
  if (!value) {
    EXPECT_EQ(text, "null") << key;
    return;
  }
  const double v = *value;
  if (std::isnan(v)) {
    EXPECT_EQ(j.at(key), "NaN") << key;
  } else if (std::isinf(v)) {
    EXPECT_EQ(j.at(key), v > 0 ? "Infinity" : "-Infinity") << key;
  } else {
    ASSERT_TRUE(j.at(key).is_number()) << key << ": " << text;
    // Bit-exact, -0 included (a JSON reader may keep "-0" as an integer).
    EXPECT_EQ(bits_of(std::strtod(text.c_str(), nullptr)), bits_of(v)) << key << ": " << text;
    if (v != 0) EXPECT_EQ(bits_of(j.at(key).get<double>()), bits_of(v)) << key << ": " << text;
  }
}

TEST(RecordNumbers, EveryNumberOfARecordParsesBackBitExactly) {
  const std::vector<double> values = sample_doubles(20000);
  const double kSpecial[] = {std::numeric_limits<double>::quiet_NaN(),
                             std::numeric_limits<double>::infinity(),
                             -std::numeric_limits<double>::infinity()};
  const RecordFormatter f(StatSet::parse({"all"}), 7);
  std::mt19937_64 rng(7);
  std::size_t next = 0;
  auto pick = [&]() -> std::optional<double> {
    const std::uint64_t r = rng();
    if (r % 29 == 0) return std::nullopt;
    if (r % 31 == 0) return kSpecial[(r >> 8) % 3];
    return values[next++ % values.size()];
  };
  for (int record = 0; record < 2000; ++record) {
    TensorStats s;
    s.numel = static_cast<std::int64_t>(rng() >> 1);
    s.shape = {static_cast<std::int64_t>(rng() % 4096), -1,
               std::numeric_limits<std::int64_t>::max()};
    s.dtype = record % 2 == 0 ? "torch.bfloat16" : "torch.float16";
    s.device = "cpu";
    s.sum = pick();
    s.mean = pick();
    s.abs_mean = pick();
    s.min = pick();
    s.max = pick();
    s.absmax = pick();
    s.std = pick();
    s.rms = pick();
    s.l2 = pick();
    s.nan_count = static_cast<std::int64_t>(rng() >> 1);
    s.inf_count = std::numeric_limits<std::int64_t>::max();
    s.zero_count = 0;
    s.hash = rng();
    const TensorStats kept = s;
    ActivationRecord r("blocks." + std::to_string(record), "out", "", record - 1000, std::move(s));
    r.seq = rng();
    std::string line;
    f.append(line, r);
    const nlohmann::json j = nlohmann::json::parse(line);
    expect_exact(line, j, "sum", kept.sum);
    expect_exact(line, j, "mean", kept.mean);
    expect_exact(line, j, "abs_mean", kept.abs_mean);
    expect_exact(line, j, "min", kept.min);
    expect_exact(line, j, "max", kept.max);
    expect_exact(line, j, "absmax", kept.absmax);
    expect_exact(line, j, "std", kept.std);
    expect_exact(line, j, "rms", kept.rms);
    expect_exact(line, j, "l2", kept.l2);
    EXPECT_EQ(j.at("numel").get<std::int64_t>(), kept.numel);
    EXPECT_EQ(j.at("shape").get<std::vector<std::int64_t>>(), kept.shape);
    EXPECT_EQ(j.at("nan_count").get<std::int64_t>(), kept.nan_count);
    EXPECT_EQ(j.at("inf_count").get<std::int64_t>(), kept.inf_count);
    EXPECT_EQ(j.at("zero_count").get<std::int64_t>(), 0);
    EXPECT_EQ(j.at("seq").get<std::uint64_t>(), r.seq);
    EXPECT_EQ(j.at("step").get<std::int64_t>(), record - 1000);
    EXPECT_EQ(std::stoull(j.at("hash").get<std::string>(), nullptr, 16), *kept.hash);
    if (::testing::Test::HasFailure()) FAIL() << line;
  }
}

// bf16 and fp16 statistics hold float values: read back as float too, they
// are the same float (the text is the double's, so it is exact either way).
TEST(RecordNumbers, HalfPrecisionValuesReadBackAsTheSameFloat) {
  const RecordFormatter f(StatSet::parse({"min", "max"}), 0);
  for (std::uint32_t bits = 0; bits < 0x10000; bits += 7) {
    const float value = bf16_to_float(static_cast<std::uint16_t>(bits));
    if (!std::isfinite(value)) continue;
    TensorStats s;
    s.min = value;
    s.max = -value;
    ActivationRecord r("m", "out", "", 0, std::move(s));
    std::string line;
    f.append(line, r);
    const std::string text = raw_value(line, "min");
    const float back = std::strtof(text.c_str(), nullptr);
    EXPECT_EQ(std::memcmp(&back, &value, sizeof(float)), 0) << text;
  }
}

}  // namespace
}  // namespace regiontrace::activation
