#include "region_stats_settings.hpp"

#include <gtest/gtest.h>

namespace regiontrace::region_stats {
namespace {

TEST(RegionStatsSettings, ListenAddressesDefaultToLoopback) {
  EXPECT_EQ(parse_listen_address("127.0.0.1:9464").text(), "127.0.0.1:9464");
  EXPECT_EQ(parse_listen_address("9464").text(), "127.0.0.1:9464");
  EXPECT_EQ(parse_listen_address(":9464").text(), "127.0.0.1:9464");
  EXPECT_EQ(parse_listen_address("0.0.0.0:80").text(), "0.0.0.0:80");
  EXPECT_EQ(parse_listen_address("[::1]:9464").text(), "[::1]:9464");
  // Port 0: the system picks a free port (the sink logs which).
  EXPECT_EQ(parse_listen_address("127.0.0.1:0").text(), "127.0.0.1:0");
}

TEST(RegionStatsSettings, BadListenAddressesSayWhatIsValid) {
  for (const char* bad : {"", "localhost", "host:-1", "host:70000", "host:12ab", "a b:80"}) {
    try {
      parse_listen_address(bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const std::invalid_argument& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(std::string("`") + bad + "`"), std::string::npos) << what;
      EXPECT_NE(what.find("127.0.0.1:9464"), std::string::npos) << what;
    }
  }
}

TEST(RegionStatsSettings, BucketBoundsArePositiveAndIncreasing) {
  EXPECT_EQ(parse_bucket_bounds({"0.001", "0.5", "2"}), (std::vector<double>{0.001, 0.5, 2}));
  EXPECT_THROW(parse_bucket_bounds({"0.5", "0.1"}), std::invalid_argument);
  EXPECT_THROW(parse_bucket_bounds({"-1"}), std::invalid_argument);
  EXPECT_THROW(parse_bucket_bounds({"fast"}), std::invalid_argument);
  EXPECT_THROW(parse_bucket_bounds({"0"}), std::invalid_argument);
}

TEST(RegionStatsSettings, SchemaDefaultsParse) {
  SinkContext ctx("region_stats", "/tmp", 0, 0, 1, 1, nullptr);
  for (const KeySpec& k : RegionStatsSettings::schema()) {
    if (k.type == KeyType::kStringList) {
      std::vector<std::string> items;
      std::string item;
      for (char c : k.default_value + ",") {
        if (c == ',') {
          if (!item.empty()) items.push_back(item);
          item.clear();
        } else {
          item += c;
        }
      }
      ctx.set_value(k.name, items);
      for (const std::string& i : items) {
        if (k.value_check != nullptr) EXPECT_EQ(k.value_check(i), "") << k.name << " " << i;
      }
    } else {
      ctx.set_value(k.name, {k.default_value});
      if (k.value_check != nullptr) EXPECT_EQ(k.value_check(k.default_value), "") << k.name;
    }
  }
  const RegionStatsSettings s = RegionStatsSettings::from(ctx);
  EXPECT_TRUE(s.prometheus_listen.empty());
  EXPECT_EQ(s.table, TableTarget::kStderr);
  EXPECT_EQ(s.max_steps, 1000);
  EXPECT_GE(s.prometheus_buckets.size(), 10u);
}

}  // namespace
}  // namespace regiontrace::region_stats
