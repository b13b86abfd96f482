#include "regiontrace/sdk/glob.hpp"

#include <fnmatch.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using regiontrace::sdk::glob_match;

TEST(Glob, SetsAndRangesMatchOneCharacter) {
  EXPECT_TRUE(glob_match("blocks.[0-3]", "blocks.0"));
  EXPECT_TRUE(glob_match("blocks.[0-3]", "blocks.3"));
  EXPECT_FALSE(glob_match("blocks.[0-3]", "blocks.4"));
  EXPECT_FALSE(glob_match("blocks.[0-3]", "blocks.10"));
  EXPECT_TRUE(glob_match("blocks.[!0-3]", "blocks.7"));
  EXPECT_FALSE(glob_match("blocks.[^0-3]", "blocks.2"));
  EXPECT_TRUE(glob_match("[]x]", "]"));
  EXPECT_TRUE(glob_match("a[[:digit:]]", "a7"));
  EXPECT_FALSE(glob_match("a[[:digit:]]", "ab"));
}

TEST(Glob, StarAndQuestionMark) {
  EXPECT_TRUE(glob_match("*", ""));
  EXPECT_TRUE(glob_match("blocks.*", "blocks.12"));
  EXPECT_TRUE(glob_match("*denoising*", "inference_denoising/blocks.3"));
  EXPECT_TRUE(glob_match("blocks.?", "blocks.9"));
  EXPECT_FALSE(glob_match("blocks.?", "blocks.10"));
  EXPECT_TRUE(glob_match("a*b*c", "aXbYbZc"));
  EXPECT_FALSE(glob_match("a*b*c", "aXbYbZ"));
  EXPECT_TRUE(glob_match("\\*", "*"));
  EXPECT_FALSE(glob_match("\\*", "x"));
  EXPECT_TRUE(glob_match("[", "["));  // unterminated set: a literal '['
}

// fnmatch(…, 0) is the reference: region filters used it before, so every
// pattern a user already wrote keeps its meaning.
TEST(Glob, AgreesWithFnmatch) {
  const std::vector<std::string> patterns = {
      "*",          "?",      "blocks.[0-3]", "blocks.[0-3]*", "*.[13579]",
      "[a-c]*[!x]", "a?c",    "*a*a*a*",      "[]]*",          "[!]]",
      "x[",         "*[0-9]", "\\[a]",        "[\\]]",         "[a-]",
      "[-a]",       "**",     "b*s.?",        "*/blocks*",     "[[:alpha:]]*"};
  const std::vector<std::string> names = {
      "",         "a",          "abc",      "blocks.0", "blocks.3",
      "blocks.4", "blocks.31",  "x.7",      "x.8",      "aaa",
      "abab",     "]",          "]]",       "x[",       "[a]",
      "-",        "a/blocks.1", "blocks.a", "bas.c",    "inference_denoising/blocks.2"};
  for (const std::string& p : patterns) {
    for (const std::string& n : names) {
      EXPECT_EQ(glob_match(p, n), fnmatch(p.c_str(), n.c_str(), 0) == 0)
          << "pattern `" << p << "` name `" << n << "`";
    }
  }
}

TEST(Glob, IsGlobSeesEveryMetaCharacter) {
  EXPECT_TRUE(regiontrace::sdk::is_glob("blocks.*"));
  EXPECT_TRUE(regiontrace::sdk::is_glob("blocks.?"));
  EXPECT_TRUE(regiontrace::sdk::is_glob("blocks.[0-3]"));
  EXPECT_FALSE(regiontrace::sdk::is_glob("blocks.3"));
}

}  // namespace
