// The public inspection API (<regiontrace/inspect.hpp>), as a tool uses it:
// through libregiontrace.so's exported names only. Nothing it does starts a
// sink or creates a folder.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "regiontrace/inspect.hpp"
#include "regiontrace/regiontrace.hpp"
#include "test_support.hpp"

namespace regiontrace::test {
namespace {

namespace ri = regiontrace::inspect;

ri::LoadRequest request_for(const std::string& profile, ri::Environment env = {}) {
  ri::LoadRequest request;
  request.profiles = {profile};
  env["REGIONTRACE_PLUGIN_PATH"] = test_plugin_dir();
  request.environment = std::move(env);
  return request;
}

const ri::Setting* setting(const ri::Configuration& c, const std::string& key) {
  for (const ri::Setting& s : c.settings) {
    if (s.key == key) return &s;
  }
  return nullptr;
}

const ri::SinkView* sink(const ri::Configuration& c, const std::string& name) {
  for (const ri::SinkView& s : c.sinks) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

// Shipped profiles by bare name (<datadir>/regiontrace/profiles beside the
// library, the build tree laid out the same): a name that is no file here
// becomes the shipped file; anything else is left for the reader.
TEST(Inspect, AShippedProfileIsFoundByItsBareName) {
  const std::string kernels = ri::profile_file("kernels.yaml");
  const std::string tail = "/share/regiontrace/profiles/kernels.yaml";
  EXPECT_TRUE(kernels.size() > tail.size() &&
              kernels.compare(kernels.size() - tail.size(), tail.size(), tail) == 0)
      << kernels;
  EXPECT_TRUE(std::filesystem::is_regular_file(kernels)) << kernels;
  EXPECT_EQ(ri::profile_file("no_such_profile.yaml"), "no_such_profile.yaml");
  EXPECT_EQ(ri::profile_file("./kernels.yaml"), "./kernels.yaml");

  ri::LoadRequest request;
  request.environment = {{"REGIONTRACE_CONFIG", "quikstart.yaml"},
                         {"REGIONTRACE_PLUGIN_PATH", test_plugin_dir()}};
  const ri::LoadResult r = ri::load_configuration(request);
  EXPECT_FALSE(r.ok());
  std::string all;
  for (const std::string& e : r.errors) all += e + "\n";
  EXPECT_NE(all.find("profile quikstart.yaml: no such file in the working folder, and no shipped "
                     "profile has that name (did you mean `quickstart.yaml`?) (shipped: "),
            std::string::npos)
      << all;
}

TEST(Inspect, LoadsTheEffectiveConfigurationWithoutStartingSinks) {
  TempDir dir;
  write_file(dir.file("p.yaml"), "output_dir: " + dir.file("out") +
                                     "\nsinks:\n  recorder:\n    regions: [model_loading]\n"
                                     "  recorder2:\n    enabled: false\n");
  const ri::LoadResult r = ri::load_configuration(
      request_for(dir.file("p.yaml"), {{"REGIONTRACE_RECORDER_TENSORS", "1"}}));
  ASSERT_TRUE(r.ok()) << r.startup_message;
  EXPECT_TRUE(r.startup_message.empty());
  const ri::Configuration& c = r.configuration;
  ASSERT_EQ(c.profiles.size(), 1u);
  const ri::Setting* out = setting(c, "output_dir");
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->items, std::vector<std::string>{dir.file("out")});
  EXPECT_EQ(out->source, dir.file("p.yaml") + ":1");
  const ri::Setting* tensors = setting(c, "sinks.recorder.tensors");
  ASSERT_NE(tensors, nullptr);
  EXPECT_EQ(tensors->type, "bool");
  EXPECT_NE(tensors->source.find("REGIONTRACE_RECORDER_TENSORS"), std::string::npos);

  const ri::SinkView* recorder = sink(c, "recorder");
  ASSERT_NE(recorder, nullptr);
  EXPECT_TRUE(recorder->enabled);
  EXPECT_TRUE(recorder->runs_on_this_rank);
  EXPECT_NE(recorder->plugin_path.find("regiontrace_sink_recorder"), std::string::npos);
  EXPECT_FALSE(recorder->selection.everything);
  EXPECT_NE(std::find(recorder->selection.matched.begin(), recorder->selection.matched.end(),
                      "profiler_region_model_loading"),
            recorder->selection.matched.end());
  const ri::SinkView* off = sink(c, "recorder2");
  ASSERT_NE(off, nullptr);
  EXPECT_FALSE(off->enabled);

  EXPECT_NE(c.json.find("\"output_dir\""), std::string::npos);
  EXPECT_NE(c.text.find("output_dir"), std::string::npos);
  // Inspected, not started: no sink runs and no folder was made.
  EXPECT_FALSE(regiontrace::enabled());
  EXPECT_FALSE(std::filesystem::exists(dir.file("out")));
}

TEST(Inspect, ReturnsEveryErrorOnItsOwn) {
  TempDir dir;
  write_file(dir.file("bad.yaml"),
             "log_level: chatty\nsinks:\n  recorder:\n    tensor: true\n  recordr: {}\n");
  const ri::LoadResult r = ri::load_configuration(request_for(dir.file("bad.yaml")));
  EXPECT_FALSE(r.ok());
  ASSERT_EQ(r.errors.size(), 3u) << r.startup_message;
  EXPECT_EQ(r.startup_message.rfind("3 configuration errors:", 0), 0u) << r.startup_message;
  const auto has = [&](const std::string& text) {
    return std::any_of(r.errors.begin(), r.errors.end(),
                       [&](const std::string& e) { return e.find(text) != std::string::npos; });
  };
  EXPECT_TRUE(has("`log_level` (" + dir.file("bad.yaml") + ":1)")) << r.startup_message;
  EXPECT_TRUE(has("unknown key `sinks.recorder.tensor` (" + dir.file("bad.yaml") + ":4)"))
      << r.startup_message;
  EXPECT_TRUE(has("unknown sink `recordr`")) << r.startup_message;
  for (const std::string& e : r.errors) EXPECT_EQ(e.find("\n  - "), std::string::npos) << e;
}

TEST(Inspect, OneErrorAlsoForAProfileThatDoesNotParse) {
  TempDir dir;
  write_file(dir.file("one.yaml"), "log_level: chatty\n");
  const ri::LoadResult one = ri::load_configuration(request_for(dir.file("one.yaml")));
  ASSERT_EQ(one.errors.size(), 1u);
  EXPECT_EQ(one.startup_message, "configuration error: " + one.errors[0]);

  write_file(dir.file("broken.yaml"), "sinks: [unclosed\n");
  const ri::LoadResult broken = ri::load_configuration(request_for(dir.file("broken.yaml")));
  ASSERT_EQ(broken.errors.size(), 1u);
  EXPECT_NE(broken.errors[0].find("broken.yaml"), std::string::npos) << broken.errors[0];
  EXPECT_EQ(broken.startup_message, "configuration error: " + broken.errors[0]);
}

TEST(Inspect, CatalogErrorsComeAfterAValidConfiguration) {
  TempDir dir;
  write_file(dir.file("p.yaml"), "catalogs: [" + dir.file("missing.yaml") + "]\n");
  const ri::LoadResult r = ri::load_configuration(request_for(dir.file("p.yaml")));
  EXPECT_TRUE(r.startup_message.empty()) << r.startup_message;
  ASSERT_FALSE(r.errors.empty());
  EXPECT_NE(r.errors[0].find("missing.yaml"), std::string::npos) << r.errors[0];
}

TEST(Inspect, SinksAndTheirSchemas) {
  const ri::SinkFiles found = ri::find_sinks({{"REGIONTRACE_PLUGIN_PATH", test_plugin_dir()}});
  EXPECT_TRUE(found.errors.empty());
  const auto recorder = std::find_if(found.sinks.begin(), found.sinks.end(),
                                     [](const ri::SinkFile& f) { return f.name == "recorder"; });
  ASSERT_NE(recorder, found.sinks.end());
  EXPECT_EQ(recorder->origin, "env REGIONTRACE_PLUGIN_PATH");

  const ri::PluginSchema schema = ri::sink_schema(*recorder);
  EXPECT_TRUE(schema.error.empty()) << schema.error;
  EXPECT_EQ(schema.name, "recorder");
  const auto tensors = std::find_if(schema.keys.begin(), schema.keys.end(),
                                    [](const ri::SchemaKey& k) { return k.name == "tensors"; });
  ASSERT_NE(tensors, schema.keys.end());
  EXPECT_EQ(tensors->type, "bool");
  EXPECT_TRUE(tensors->has_default);
  EXPECT_EQ(tensors->default_value, "false");
  EXPECT_FALSE(tensors->description.empty());

  const ri::PluginSchema missing =
      ri::sink_schema({"x", "/nonexistent/regiontrace_sink_x.so", "test"});
  EXPECT_FALSE(missing.error.empty());
  EXPECT_TRUE(missing.keys.empty());

  const std::vector<ri::SchemaKey> core = ri::core_keys();
  const auto log_level = std::find_if(core.begin(), core.end(),
                                      [](const ri::SchemaKey& k) { return k.name == "log_level"; });
  ASSERT_NE(log_level, core.end());
  EXPECT_FALSE(log_level->choices.empty());
  const std::vector<ri::SchemaKey> common = ri::common_sink_keys();
  EXPECT_TRUE(std::any_of(common.begin(), common.end(),
                          [](const ri::SchemaKey& k) { return k.name == "enabled"; }));
}

TEST(Inspect, ListsRegionsFromCatalogs) {
  TempDir dir;
  write_file(dir.file("mine.yaml"),
             "regions:\n  - name: inspect_test_region\n    description: declared by the inspect "
             "test\n");
  const ri::RegionList list = ri::list_regions({dir.file("mine.yaml")});
  EXPECT_TRUE(list.errors.empty()) << (list.errors.empty() ? "" : list.errors[0]);
  const auto find = [&](const std::string& name) {
    return std::find_if(list.regions.begin(), list.regions.end(),
                        [&](const ri::RegionInfo& r) { return r.name == name; });
  };
  const auto mine = find("inspect_test_region");
  ASSERT_NE(mine, list.regions.end());
  EXPECT_EQ(mine->description, "declared by the inspect test");
  const auto builtin = find("profiler_region_model_loading");
  ASSERT_NE(builtin, list.regions.end());
  EXPECT_EQ(builtin->short_name, "model_loading");

  const ri::RegionList bad = ri::list_regions({dir.file("nope.yaml")});
  ASSERT_EQ(bad.errors.size(), 1u);
  EXPECT_NE(bad.errors[0].find("nope.yaml"), std::string::npos);
}

}  // namespace
}  // namespace regiontrace::test
