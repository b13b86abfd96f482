// The colour rules on their own: parsing the `colors` key, globs, precedence
// and the colour derived from a name.
#include <gtest/gtest.h>

#include <set>
#include <stdexcept>
#include <string>

#include "region_colors.hpp"
#include "regiontrace/sdk/glob.hpp"

namespace regiontrace::nvtx {
namespace {

TEST(NvtxColors, ParsesRulesInEverySpelling) {
  EXPECT_EQ(parse_color_rule("a=#C44E52").argb, 0xFFC44E52u);
  EXPECT_EQ(parse_color_rule("a=c44e52").argb, 0xFFC44E52u);
  EXPECT_EQ(parse_color_rule("a=0xC44E52").argb, 0xFFC44E52u);
  EXPECT_EQ(parse_color_rule("blocks.*=#000000").pattern, "blocks.*");
  EXPECT_EQ(parse_color_rule("a=b=#010203").pattern, "a=b") << "the last `=` splits";
}

TEST(NvtxColors, RejectsMalformedRulesSayingWhatIsValid) {
  for (const char* bad : {"no_colour", "=#123456", "a=#12345", "a=#12345G", "a=red"}) {
    try {
      parse_color_rule(bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
    }
  }
}

TEST(NvtxColors, GlobsMatchWholeNames) {
  using sdk::glob_match;  // the one matcher `regions` uses too
  EXPECT_TRUE(glob_match("blocks.*", "blocks.3"));
  EXPECT_TRUE(glob_match("*denois*", "profiler_region_inference_denoising"));
  EXPECT_TRUE(glob_match("b?ocks", "blocks"));
  EXPECT_TRUE(glob_match("*", ""));
  EXPECT_FALSE(glob_match("blocks", "blocks.3"));
  EXPECT_FALSE(glob_match("blocks.*", "head"));
  EXPECT_FALSE(glob_match("*x", "xy"));
}

// `regions: [blocks.[0-3]]` selected these regions long before `colors`
// accepted the same pattern: both now go through the SDK's glob.
TEST(NvtxColors, SetsInPatternsWorkAsInRegionFilters) {
  const std::vector<ColorRule> rules = {parse_color_rule("blocks.[0-3]=#010203")};
  for (const char* name : {"blocks.0", "blocks.2", "blocks.3"}) {
    EXPECT_EQ(region_color(name, 0, rules), 0xFF010203u) << name;
  }
  for (const char* name : {"blocks.4", "blocks.10", "blocks.[0-3]"}) {
    EXPECT_EQ(region_color(name, 0, rules), derived_color(name)) << name;
  }
}

TEST(NvtxColors, ProfileRuleThenCatalogThenDerived) {
  const std::vector<ColorRule> rules = {parse_color_rule("a*=#010101"),
                                        parse_color_rule("ab=#020202")};
  EXPECT_EQ(region_color("ab", 0x4C72B0, rules), 0xFF010101u) << "first matching rule wins";
  EXPECT_EQ(region_color("b", 0x4C72B0, rules), 0xFF4C72B0u) << "catalog gets full alpha";
  EXPECT_EQ(region_color("b", 0x80123456, rules), 0x80123456u) << "explicit alpha is kept";
  EXPECT_EQ(region_color("b", 0, rules), derived_color("b"));
}

TEST(NvtxColors, DerivedColoursAreStableOpaqueAndVaried) {
  EXPECT_EQ(derived_color("forward"), derived_color("forward"));
  std::set<std::uint32_t> seen;
  for (const char* name : {"forward", "backward", "optimizer", "data_loading", "blocks.0",
                           "blocks.1", "attention", "mlp"}) {
    const std::uint32_t c = derived_color(name);
    EXPECT_EQ(c >> 24, 0xFFu) << name;
    seen.insert(c);
  }
  EXPECT_GE(seen.size(), 7u) << "names should rarely share a colour";
}

}  // namespace
}  // namespace regiontrace::nvtx
