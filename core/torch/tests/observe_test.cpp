// observe(): labels of nested values, and nothing at all when no sink wants
// tensors here. Uses the recording test sink, which logs every tensor event.
#include <ATen/ATen.h>
#include <ATen/core/Dict.h>
#include <ATen/core/ivalue.h>
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "regiontrace/torch.hpp"
#include "test_support.hpp"

namespace regiontrace::test {
namespace {

struct TensorEventSeen {
  std::string label, module, path;
};

std::vector<TensorEventSeen> tensor_events(const std::string& file) {
  std::vector<TensorEventSeen> out;
  for (const nlohmann::json& e : read_jsonl(file)) {
    if (e["event"] == "tensor") out.push_back({e["label"], e["module"], e["path"]});
  }
  return out;
}

std::vector<std::string> labels(const std::vector<TensorEventSeen>& events) {
  std::vector<std::string> out;
  for (const auto& e : events) out.push_back(e.label);
  return out;
}

class Observe : public ::testing::Test {
 protected:
  void start(std::map<std::string, std::string> extra = {}) {
    extra.emplace("sinks.recorder.tensors", "true");
    init(recorder_options(file_, extra));
  }
  std::vector<TensorEventSeen> stop() {
    shutdown();
    return tensor_events(file_);
  }
  CleanEnv env_;
  TempDir dir_;
  std::string file_ = dir_.file("events.jsonl");
  at::Tensor a_ = at::ones({2});
  at::Tensor b_ = at::zeros({3});
};

TEST_F(Observe, ATensorKeepsItsLabelAndRegion) {
  start();
  {
    RT_REGION("outer");
    RT_REGION("blocks.3");
    observe("out", a_);
  }
  const auto events = stop();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].label, "out");
  EXPECT_EQ(events[0].module, "blocks.3");
  EXPECT_EQ(events[0].path, "outer/blocks.3");
}

TEST_F(Observe, NestedStdValuesAreFlattened) {
  start();
  {
    RT_REGION("layer");
    observe("v", std::vector<at::Tensor>{a_, b_});
    observe("t", std::make_tuple(a_, std::vector<at::Tensor>{b_}, std::make_pair(a_, 3)));
    observe("m", std::map<std::string, at::Tensor>{{"k", a_}, {"q", b_}});
    observe("i", std::map<int, at::Tensor>{{4, a_}});
    observe("o", std::optional<at::Tensor>(a_));
    observe("none", std::optional<at::Tensor>());
    observe("u", at::Tensor());  // undefined: skipped
    observe("s", std::vector<std::string>{"not", "tensors"});
  }
  EXPECT_EQ(labels(stop()), (std::vector<std::string>{"v[0]", "v[1]", "t[0]", "t[1][0]", "t[2][0]",
                                                      "m.k", "m.q", "i[4]", "o"}));
}

TEST_F(Observe, IValuesAreFlattened) {
  start();
  {
    RT_REGION("layer");
    c10::Dict<std::string, at::Tensor> dict;
    dict.insert("hidden", a_);
    dict.insert("attn", b_);
    const c10::IValue nested(
        c10::ivalue::Tuple::create({c10::IValue(a_), c10::IValue(std::vector<at::Tensor>{a_, b_}),
                                    c10::IValue(dict), c10::IValue(3.5), c10::IValue()}));
    observe("out", nested);
    observe("plain", c10::IValue(b_));
  }
  EXPECT_EQ(labels(stop()), (std::vector<std::string>{"out[0]", "out[1][0]", "out[1][1]",
                                                      "out[2].hidden", "out[2].attn", "plain"}));
}

TEST_F(Observe, NothingReachesSinksThatDoNotAskForTensors) {
  init(recorder_options(file_));  // the recorder without tensors
  EXPECT_FALSE(detail::g_tensors_wanted.load());
  {
    RT_REGION("layer");
    observe("out", a_);
  }
  EXPECT_TRUE(stop().empty());
}

TEST_F(Observe, OnlySelectedRegionsSeeTensors) {
  declare_region("wanted", "the region the recorder selects");
  start({{"sinks.recorder.regions", "wanted"}});
  observe("outside", a_);
  {
    RT_REGION("other");
    observe("other", a_);
    EXPECT_FALSE(detail::tensor_wanted_here(TensorOrigin::kObserved));
  }
  {
    RT_REGION("wanted");
    EXPECT_TRUE(detail::tensor_wanted_here(TensorOrigin::kObserved));
    observe("kept", std::vector<at::Tensor>{a_});
  }
  const auto events = stop();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].label, "kept[0]");
  EXPECT_EQ(events[0].module, "wanted");
}

// observe() is an entry point like a region: in a program that has not
// started regiontrace, the first observe() starts it from the environment.
TEST(ObserveFirst, StartsRegiontraceLikeARegion) {
  CleanEnv env;
  TempDir dir;
  const std::string file = dir.file("events.jsonl");
  const ChildResult r = run_in_child([&] {
    setenv("REGIONTRACE_PLUGIN_PATH", test_plugin_dir().c_str(), 1);
    setenv("REGIONTRACE_SINKS", "recorder", 1);
    setenv("REGIONTRACE_RECORDER_FILE", file.c_str(), 1);
    setenv("REGIONTRACE_RECORDER_TENSORS", "1", 1);
    setenv("REGIONTRACE_OUTPUT_DIR", dir.path().c_str(), 1);
    // A forked child starts with regiontrace off; make it a fresh process.
    detail::g_tensors_wanted.store(true);
    detail::g_state.store(detail::kStateUninitialized);
    observe("first", at::ones({2}));
    return enabled() ? 0 : 3;
  });
  ASSERT_TRUE(r.exited);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(labels(tensor_events(file)), (std::vector<std::string>{"first"}));
}

}  // namespace
}  // namespace regiontrace::test
