// Random and truncated YAML must give a clean error or a valid configuration,
// never a crash or an exception of another type.
#include <gtest/gtest.h>

#include <random>

#include "config/config_loader.hpp"
#include "config/config_sources.hpp"
#include "test_support.hpp"

namespace regiontrace::test {
namespace {

const char* const kSeedProfile = R"(# a profile with every shape of value
output_dir: /tmp/rt_fuzz
regions: [inference_denoising, "blocks.*"]
log_level: warn
catalogs: []
plugins:
  paths: []
sinks:
  recorder:
    regions: model_loading
    steps: [0, 2-4]
    ranks: 0
    tensors: yes
    file: "${output_dir}/x_${rank}.jsonl"
)";

void load_or_clean_error(const std::string& text) {
  detail::ConfigTree tree;
  try {
    detail::load_profile_text(text, "fuzz.yaml", tree);
  } catch (const Error&) {
    return;  // a clean, explained refusal
  }
  Options o;
  o.read_environment = false;
  o.set("plugins.paths", test_plugin_dir());
  TempDir dir;
  const std::string path = dir.file("fuzz.yaml");
  write_file(path, text);
  o.profiles = {path};
  detail::LoadMode mode;
  mode.create_output_dirs = false;
  try {
    detail::load_configuration(o, {}, mode);
  } catch (const Error&) {
  }
}

TEST(ConfigFuzz, EveryTruncationIsHandled) {
  const std::string text = kSeedProfile;
  for (std::size_t n = 0; n <= text.size(); ++n) {
    ASSERT_NO_FATAL_FAILURE(load_or_clean_error(text.substr(0, n))) << n;
  }
}

TEST(ConfigFuzz, RandomMutationsAreHandled) {
  std::mt19937 rng(1234);
  const std::string alphabet = ":-[]{}#&*!|>'\"%@`,?\n \t.$0123456789abcxyz";
  for (int i = 0; i < 400; ++i) {
    std::string text = kSeedProfile;
    const int edits = 1 + static_cast<int>(rng() % 6);
    for (int e = 0; e < edits; ++e) {
      const std::size_t pos = rng() % text.size();
      switch (rng() % 3) {
        case 0:
          text[pos] = alphabet[rng() % alphabet.size()];
          break;
        case 1:
          text.insert(pos, 1, alphabet[rng() % alphabet.size()]);
          break;
        default:
          text.erase(pos, 1 + rng() % 4);
          break;
      }
    }
    ASSERT_NO_FATAL_FAILURE(load_or_clean_error(text)) << text;
  }
}

TEST(ConfigFuzz, RandomBytesAreHandled) {
  std::mt19937 rng(99);
  for (int i = 0; i < 200; ++i) {
    std::string text(rng() % 200, '\0');
    for (char& c : text) c = static_cast<char>(rng() % 256);
    ASSERT_NO_FATAL_FAILURE(load_or_clean_error(text));
  }
}

}  // namespace
}  // namespace regiontrace::test
