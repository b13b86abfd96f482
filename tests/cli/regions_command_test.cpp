#include <gtest/gtest.h>

#include "test_support.hpp"

namespace regiontrace::test {
namespace {

TEST(RegionsCommand, ListsTheSeedCatalogWithShortNames) {
  const auto r = run_command(REGIONTRACE_CLI " regions");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  int count = 0;
  for (std::size_t p = r.output.find("profiler_region_"); p != std::string::npos;
       p = r.output.find("\n", p), p = r.output.find("profiler_region_", p)) {
    ++count;
  }
  EXPECT_EQ(count, 18) << r.output;  // the seed's 15 and the 3 FastVideo's code adds
  EXPECT_NE(r.output.find("[short: training_backward]"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("[short: training_train_one_step]"), std::string::npos) << r.output;
}

TEST(RegionsCommand, AddsGivenCatalogsAndRejectsBadOnes) {
  TempDir dir;
  write_file(dir.file("mine.yaml"), "- name: vae_decode\n  description: decoding latents\n");
  const auto r = run_command(std::string(REGIONTRACE_CLI " regions ") + dir.file("mine.yaml"));
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.output.find("vae_decode"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("decoding latents"), std::string::npos) << r.output;

  write_file(dir.file("bad.yaml"), "regions: {not: a list}\n");
  const auto bad = run_command(std::string(REGIONTRACE_CLI " regions ") + dir.file("bad.yaml"));
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.output.find(dir.file("bad.yaml") + ":1"), std::string::npos) << bad.output;
}

}  // namespace
}  // namespace regiontrace::test
