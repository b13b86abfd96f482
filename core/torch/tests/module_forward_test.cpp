// forward() with the standard libtorch containers: ModuleList and ModuleDict
// elements (handed out as plain nn::Modules), Sequential and AnyModule. Each
// form must compile and open the region name_modules() gave the module; a
// module region is selected by its exact name even when it registers after
// start-up. Uses the recording test sink.
#include <gtest/gtest.h>
#include <torch/nn.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "recorded_events.hpp"
#include "regiontrace/torch.hpp"
#include "test_support.hpp"

namespace regiontrace::test {
namespace {

struct BlockImpl : torch::nn::Module {
  BlockImpl() { fc = register_module("fc", torch::nn::Linear(4, 4)); }
  torch::Tensor forward(const torch::Tensor& x, double scale) {
    return regiontrace::forward(fc, x) * scale;
  }
  torch::nn::Linear fc{nullptr};
};
TORCH_MODULE(Block);

struct NetImpl : torch::nn::Module {
  NetImpl() {
    blocks = register_module("blocks", torch::nn::ModuleList());
    for (int i = 0; i < 4; ++i) blocks->push_back(Block());
    heads = register_module("heads", torch::nn::ModuleDict());
    heads->update({{"proj", Block().ptr()}});
    seq = register_module("seq", torch::nn::Sequential(torch::nn::Linear(4, 4), torch::nn::ReLU()));
    any = torch::nn::AnyModule(torch::nn::Linear(4, 4));
    register_module("any", any.ptr());
  }
  torch::nn::ModuleList blocks{nullptr};
  torch::nn::ModuleDict heads{nullptr};
  torch::nn::Sequential seq{nullptr};
  torch::nn::AnyModule any;
};
TORCH_MODULE(Net);

std::vector<std::string> begun(const std::string& file) {
  std::vector<std::string> out;
  for (const auto& e : events_of(read_jsonl(file), "begin")) out.push_back(e["name"]);
  return out;
}

class ModuleForward : public ::testing::Test {
 protected:
  void SetUp() override { regiontrace::name_modules(net_); }
  void start(std::map<std::string, std::string> extra = {}) {
    init(recorder_options(file(), std::move(extra)));
  }
  std::string file() const { return dir_.file("events.jsonl"); }

  CleanEnv env_;
  TempDir dir_;
  Net net_;
  torch::Tensor x_ = torch::ones({2, 4});
};

TEST_F(ModuleForward, ModuleListElementByItsImplOrHolderType) {
  start();
  const torch::Tensor a = regiontrace::forward<BlockImpl>(net_->blocks[3], x_, 2.0);
  const torch::Tensor b = regiontrace::forward<Block>(net_->blocks[3], x_, 2.0);
  const torch::Tensor c = regiontrace::forward(net_->blocks->ptr<BlockImpl>(3), x_, 2.0);
  shutdown();
  EXPECT_TRUE(a.equal(net_->blocks->ptr<BlockImpl>(3)->forward(x_, 2.0)));
  EXPECT_TRUE(a.equal(b) && a.equal(c));
  EXPECT_EQ(begun(file()), (std::vector<std::string>{"blocks.3", "blocks.3.fc", "blocks.3",
                                                     "blocks.3.fc", "blocks.3", "blocks.3.fc"}));
}

TEST_F(ModuleForward, ModuleDictElement) {
  start();
  regiontrace::forward<BlockImpl>(net_->heads["proj"], x_, 1.0);
  regiontrace::forward(net_->heads->at<BlockImpl>("proj"), x_, 1.0);
  shutdown();
  EXPECT_EQ(begun(file()), (std::vector<std::string>{"heads.proj", "heads.proj.fc", "heads.proj",
                                                     "heads.proj.fc"}));
}

TEST_F(ModuleForward, SequentialAndItsElements) {
  start();
  const torch::Tensor y = regiontrace::forward(net_->seq, x_);
  regiontrace::forward<torch::nn::Linear>(net_->seq[0], x_);
  regiontrace::forward<torch::nn::ReLUImpl>(net_->seq->ptr(1), x_);
  shutdown();
  EXPECT_TRUE(y.equal(net_->seq->forward(x_)));
  EXPECT_EQ(begun(file()), (std::vector<std::string>{"seq", "seq.0", "seq.1"}));
}

TEST_F(ModuleForward, AnyModule) {
  start();
  const torch::Tensor y = regiontrace::forward(net_->any, x_);
  shutdown();
  EXPECT_TRUE(y.equal(net_->any.forward(x_)));
  EXPECT_EQ(begun(file()), (std::vector<std::string>{"any"}));
}

TEST_F(ModuleForward, TheWrongTypeIsAnErrorNamingTheModule) {
  try {
    regiontrace::forward<torch::nn::LinearImpl>(net_->blocks[1], x_);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("the module `blocks.1` is a "), std::string::npos) << what;
    EXPECT_NE(what.find("LinearImpl"), std::string::npos) << what;
  }
}

// A block and its fc are called in turn; wherever the allocator put them,
// neither evicts the other's cached region: a second call looks nothing up.
// (With one cache slot per address hash, about one pair in 64 collided.)
TEST_F(ModuleForward, AModuleAndItsChildKeepTheirCachedRegionsWherever) {
  start();
  std::vector<Block> blocks(200);
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    regiontrace::name_modules(*blocks[i], "pair" + std::to_string(i));
  }
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    regiontrace::forward(blocks[i], x_, 1.0);
    const std::uint64_t lookups = detail::module_region_lookups();
    regiontrace::forward(blocks[i], x_, 1.0);
    EXPECT_EQ(detail::module_region_lookups() - lookups, 0u) << "pair" << i;
  }
  shutdown();
}

// forward() keeps each module's region per thread: repeated calls look no
// name up, give the same region, and a name given (or changed) later by
// name_modules() is seen on the next call.
TEST_F(ModuleForward, TheRegionIsCachedPerModuleAndFollowsALaterName) {
  start();
  Block late;  // not named yet: its region is its class name
  std::uint64_t lookups = detail::module_region_lookups();
  for (int i = 0; i < 50; ++i) regiontrace::forward<BlockImpl>(net_->blocks[2], x_, 1.0);
  EXPECT_LE(detail::module_region_lookups() - lookups, 2u) << "blocks.2 and blocks.2.fc, once";
  const RegionId cached = detail::module_region_id(*net_->blocks[2]);
  EXPECT_EQ(cached, region_id("blocks.2"));

  regiontrace::forward(late, x_, 1.0);
  regiontrace::forward(late, x_, 1.0);
  EXPECT_EQ(detail::module_region_id(*late), region_id(late->name()));

  regiontrace::name_modules(late, "late");
  lookups = detail::module_region_lookups();
  regiontrace::forward(late, x_, 1.0);
  regiontrace::forward(late, x_, 1.0);
  EXPECT_EQ(detail::module_region_lookups() - lookups, 2u) << "late and late.fc, once each";

  regiontrace::name_modules(net_, "renamed");
  regiontrace::forward<BlockImpl>(net_->blocks[2], x_, 1.0);
  shutdown();

  std::vector<std::string> want;
  for (int i = 0; i < 50; ++i) {
    want.push_back("blocks.2");
    want.push_back("blocks.2.fc");
  }
  for (int i = 0; i < 2; ++i) {
    want.push_back(late->name());
    want.push_back(late->fc->name());
  }
  for (int i = 0; i < 2; ++i) {
    want.push_back("late");
    want.push_back("late.fc");
  }
  want.push_back("renamed.blocks.2");
  want.push_back("renamed.blocks.2.fc");
  EXPECT_EQ(begun(file()), want);
}

TEST(ModuleForwardSelection, AModuleRegionIsSelectedByNameBeforeTheModelExists) {
  CleanEnv env;
  TempDir dir;
  const std::string file = dir.file("events.jsonl");
  testing::internal::CaptureStderr();
  init(recorder_options(file, {{"regions", "blocks.3"}}));
  Net net;  // built and named after start-up: its regions register now
  regiontrace::name_modules(net);
  const torch::Tensor x = torch::ones({2, 4});
  for (std::size_t i = 0; i < net->blocks->size(); ++i) {
    regiontrace::forward<BlockImpl>(net->blocks[i], x, 1.0);
  }
  shutdown();
  const std::string log = testing::internal::GetCapturedStderr();
  EXPECT_EQ(log.find("unknown region"), std::string::npos) << log;
  EXPECT_EQ(log.find("never entered"), std::string::npos) << log;
  EXPECT_EQ(begun(file), (std::vector<std::string>{"blocks.3"}));
}

}  // namespace
}  // namespace regiontrace::test
