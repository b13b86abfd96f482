// The `layers` / `op_filter` patterns: Python re syntax on RE2, refusals
// that say why, and inputs that crash or hang std::regex.
#include "name_filter.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace regiontrace::activation {
namespace {

std::string refusal(const std::string& pattern) {
  try {
    NameFilter filter("sinks.activation_trace.layers", pattern);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return {};
}

TEST(NameFilter, SearchesNamesAndTheAlternativeWithPythonSyntax) {
  NameFilter filter("layers", R"((?P<block>blocks)\.(0|1)\b)");
  EXPECT_TRUE(filter.matches("model.blocks.0.attn"));
  EXPECT_TRUE(filter.matches("blocks.1"));
  EXPECT_FALSE(filter.matches("blocks.10"));
  EXPECT_FALSE(filter.matches("head"));
  EXPECT_TRUE(filter.matches("out", "denoise/blocks.1"));  // the region path
  EXPECT_FALSE(filter.matches("head", "blocks.1"));        // remembered under the name
  EXPECT_TRUE(NameFilter("layers", "").matches("anything"));
}

TEST(NameFilter, BackreferencesAndLookaroundAreRefusedWithTheReason) {
  for (const std::string& pattern : {R"((a)\1)", "blocks(?=\\.0)", "(?<!x)blocks"}) {
    const std::string msg = refusal(pattern);
    EXPECT_NE(msg.find("sinks.activation_trace.layers: `" + pattern + "`"), std::string::npos)
        << msg;
    EXPECT_NE(msg.find("not supported"), std::string::npos) << msg;
    EXPECT_EQ(NameFilter::problem(pattern).empty(), false);
  }
  EXPECT_NE(refusal("blocks.(").find("missing )"), std::string::npos) << refusal("blocks.(");
  EXPECT_EQ(NameFilter::problem(R"(blocks\.\d+)"), "");
}

// std::regex: a 100 KB pattern overflowed the stack (SIGSEGV).
TEST(NameFilter, AHugePatternIsRefusedOrUsedNeverACrash) {
  std::string alternation;
  for (int i = 0; alternation.size() < 100000; ++i) {
    alternation += (i ? "|" : "") + std::string("blocks\\.") + std::to_string(i) + "\\b";
  }
  const std::string msg = refusal(alternation);
  if (msg.empty()) {
    NameFilter filter("layers", alternation);
    EXPECT_TRUE(filter.matches("blocks.7"));
  } else {
    EXPECT_NE(msg.find("characters"), std::string::npos) << msg;  // shortened in the message
    EXPECT_LT(msg.size(), 400u);
  }
  std::string nested(50000, '(');
  nested += std::string(50000, ')');
  EXPECT_NO_THROW(NameFilter::problem(nested));
}

// std::regex: `.*` x 28 then `x` took over a minute on one name. RE2 is
// linear; ctest's timeout is what would catch a regression.
TEST(NameFilter, ACatastrophicPatternAnswersAtOnce) {
  std::string pattern;
  for (int i = 0; i < 28; ++i) pattern += ".*";
  pattern += "x";
  NameFilter filter("layers", pattern);
  EXPECT_FALSE(filter.matches(std::string(4096, 'a')));
  EXPECT_TRUE(filter.matches(std::string(4096, 'a') + "x"));
}

}  // namespace
}  // namespace regiontrace::activation
