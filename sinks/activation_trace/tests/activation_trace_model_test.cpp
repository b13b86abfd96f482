// The activation_trace sink on a small real torch::nn model instrumented with
// regiontrace::forward: module names, order and steps; layer regex and step
// filters; op-level mode; records checked against the tensors themselves;
// the seed's FASTVIDEO_TRACE_* variables; files whole after SIGTERM; and
// running next to the torch_profiler sink.
#include <ATen/record_function.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <torch/nn.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <thread>

#include "regiontrace/tensor_stats.hpp"
#include "regiontrace/thread_step.hpp"
#include "regiontrace/torch.hpp"
#include "test_support.hpp"

namespace regiontrace::test {
namespace {

// --- the model ----------------------------------------------------------------

struct BlockImpl : torch::nn::Module {
  explicit BlockImpl(int dim) {
    fc1 = register_module("fc1", torch::nn::Linear(dim, 2 * dim));
    fc2 = register_module("fc2", torch::nn::Linear(2 * dim, dim));
  }
  torch::Tensor forward(const torch::Tensor& x) {
    return x + regiontrace::forward(fc2, torch::gelu(regiontrace::forward(fc1, x)));
  }
  torch::nn::Linear fc1{nullptr}, fc2{nullptr};
};
TORCH_MODULE(Block);

struct TinyNetImpl : torch::nn::Module {
  TinyNetImpl() {
    embed = register_module("embed", torch::nn::Linear(8, 16));
    blocks = register_module("blocks", torch::nn::ModuleList());
    for (int i = 0; i < 3; ++i) blocks->push_back(Block(16));
    head = register_module("head", torch::nn::Linear(16, 4));
  }
  // Two outputs: observed as out[0] and out[1].
  std::tuple<torch::Tensor, torch::Tensor> forward(const torch::Tensor& x) {
    torch::Tensor h = regiontrace::forward(embed, x);  // a holder
    for (std::size_t i = 0; i < blocks->size(); ++i) {
      h = regiontrace::forward(blocks->ptr<BlockImpl>(i), h);  // a shared_ptr
    }
    return {regiontrace::forward(head, h), h};
  }
  torch::nn::Linear embed{nullptr}, head{nullptr};
  torch::nn::ModuleList blocks{nullptr};
};
TORCH_MODULE(TinyNet);

// Module and tensor of every record one forward pass writes, in order.
std::vector<std::pair<std::string, std::string>> one_pass() {
  std::vector<std::pair<std::string, std::string>> out = {{"embed", "out"}};
  for (int b = 0; b < 3; ++b) {
    const std::string block = "blocks." + std::to_string(b);
    out.push_back({block + ".fc1", "out"});
    out.push_back({block + ".fc2", "out"});
    out.push_back({block, "out"});
  }
  out.push_back({"head", "out"});
  out.push_back({"model", "out[0]"});
  out.push_back({"model", "out[1]"});
  return out;
}

// --- helpers --------------------------------------------------------------------

Options trace_options(const TempDir& dir, std::map<std::string, std::string> keys = {}) {
  Options o;
  o.read_environment = false;
  o.set("output_dir", dir.path());
  o.set("sinks.activation_trace.enabled", "true");
  o.set("sinks.activation_trace.output", dir.file("trace.jsonl"));
  for (auto& [k, v] : keys) o.set("sinks.activation_trace." + k, v);
  return o;
}

struct Trace {
  std::vector<nlohmann::json> records;
  nlohmann::json summary;
};

Trace read_trace(const std::string& path) {
  Trace t;
  for (nlohmann::json& j : read_jsonl(path)) {
    EXPECT_EQ(j["v"], 1);
    if (j.contains("summary")) {
      t.summary = j["summary"];
    } else {
      t.records.push_back(std::move(j));
    }
  }
  EXPECT_FALSE(t.summary.is_null()) << "the summary line closes the file";
  return t;
}

class ActivationTraceModel : public ::testing::Test {
 protected:
  void SetUp() override {
    torch::manual_seed(0);
    regiontrace::name_modules(net_);
  }
  // Runs `steps` forward passes (step 0, 1, ...) and returns the last input.
  torch::Tensor run(int steps) {
    torch::NoGradGuard no_grad;
    torch::Tensor x;
    for (int s = 0; s < steps; ++s) {
      set_step(s);
      x = torch::randn({5, 8});
      regiontrace::forward(net_, x);  // a holder of the root
    }
    return x;
  }
  CleanEnv env_;
  TempDir dir_;
  TinyNet net_;
};

TEST_F(ActivationTraceModel, NameModulesGivesQualifiedNames) {
  EXPECT_EQ(regiontrace::module_name(net_), "model");
  EXPECT_EQ(regiontrace::module_name(net_->embed), "embed");
  EXPECT_EQ(regiontrace::module_name(net_->blocks->ptr<BlockImpl>(2)->fc1), "blocks.2.fc1");
  EXPECT_EQ(regiontrace::module_name(*net_->blocks->ptr<BlockImpl>(1)), "blocks.1");
  TinyNet other;
  regiontrace::name_modules(other, "ref");
  EXPECT_EQ(regiontrace::module_name(other->blocks->ptr<BlockImpl>(0)->fc2), "ref.blocks.0.fc2");
  EXPECT_EQ(regiontrace::module_name(other), "ref");
  EXPECT_EQ(regiontrace::module_name(torch::nn::Linear(2, 2)), "");
}

TEST_F(ActivationTraceModel, ForwardReturnsTheModulesResultInEveryForm) {
  Options no_sinks;
  no_sinks.read_environment = false;
  init(no_sinks);
  torch::NoGradGuard no_grad;
  const torch::Tensor x = torch::randn({5, 8});
  EXPECT_TRUE(regiontrace::forward(net_->embed, x).equal(net_->embed->forward(x)));  // holder
  BlockImpl& block = *net_->blocks->ptr<BlockImpl>(0);
  const torch::Tensor h = torch::randn({5, 16});
  EXPECT_TRUE(regiontrace::forward(block, h).equal(block.forward(h)));  // reference
  const auto [y, last] = regiontrace::forward(net_.ptr(), x);           // shared_ptr, tuple result
  EXPECT_TRUE(y.equal(std::get<0>(net_->forward(x))));
  EXPECT_EQ(last.sizes(), (std::vector<std::int64_t>{5, 16}));
  shutdown();
}

TEST_F(ActivationTraceModel, RecordsFollowModulesStepsAndOrder) {
  init(trace_options(dir_, {{"stats", "sum,abs_mean,shape,dtype"}}));
  run(2);
  shutdown();
  const Trace t = read_trace(dir_.file("trace.jsonl"));
  const auto pass = one_pass();
  ASSERT_EQ(t.records.size(), 2 * pass.size());
  for (std::size_t i = 0; i < t.records.size(); ++i) {
    const nlohmann::json& r = t.records[i];
    EXPECT_EQ(r["module"], pass[i % pass.size()].first) << i;
    EXPECT_EQ(r["tensor"], pass[i % pass.size()].second) << i;
    EXPECT_EQ(r["step"], static_cast<int>(i / pass.size())) << i;
    EXPECT_EQ(r["seq"], i);
    EXPECT_EQ(r["rank"], 0);
    EXPECT_EQ(r["dtype"], "torch.float32");
  }
  EXPECT_EQ(t.records[0]["shape"], nlohmann::json::array({5, 16}));
  EXPECT_EQ(t.records[pass.size() - 3]["shape"], nlohmann::json::array({5, 4}));  // head
  EXPECT_EQ(t.summary["records"], t.records.size());
  EXPECT_EQ(t.summary["dropped"], 0);
}

TEST_F(ActivationTraceModel, StatisticsAreThoseOfTheTensors) {
  init(trace_options(dir_, {{"stats", "all"}}));
  torch::NoGradGuard no_grad;
  set_step(7);
  const torch::Tensor x = torch::randn({5, 8});
  const auto [y, h] = regiontrace::forward(net_, x);
  const torch::Tensor embedded = net_->embed->forward(x);  // outside any region: not traced
  shutdown();
  const Trace t = read_trace(dir_.file("trace.jsonl"));
  ASSERT_EQ(t.records.size(), one_pass().size());
  auto check = [](const nlohmann::json& r, const torch::Tensor& v) {
    const torch::Tensor d = v.to(torch::kDouble);
    EXPECT_NEAR(r["sum"].get<double>(), d.sum().item<double>(), 1e-9);
    EXPECT_NEAR(r["mean"].get<double>(), d.mean().item<double>(), 1e-12);
    EXPECT_NEAR(r["std"].get<double>(), d.std().item<double>(), 1e-9);
    EXPECT_EQ(r["min"].get<double>(), d.min().item<double>());
    EXPECT_EQ(r["max"].get<double>(), d.max().item<double>());
    EXPECT_NEAR(r["l2"].get<double>(), d.norm().item<double>(), 1e-9);
    EXPECT_EQ(r["numel"], v.numel());
    EXPECT_EQ(r["nan_count"], 0);
    EXPECT_EQ(r["device"], "cpu");
    char hex[17];
    std::snprintf(
        hex, sizeof(hex), "%016llx",
        static_cast<unsigned long long>(*compute_stats(v, StatsOptions{false, true}).hash));
    EXPECT_EQ(r["hash"], hex);
  };
  check(t.records.front(), embedded);
  check(t.records[t.records.size() - 2], y);
  check(t.records.back(), h);
  EXPECT_EQ(t.records.back()["step"], 7);
}

TEST_F(ActivationTraceModel, LayerRegexSelectsModules) {
  init(trace_options(dir_, {{"layers", "^blocks\\.1(\\.|$)"}}));
  run(1);
  shutdown();
  std::vector<std::string> modules;
  for (const auto& r : read_trace(dir_.file("trace.jsonl")).records) modules.push_back(r["module"]);
  EXPECT_EQ(modules, (std::vector<std::string>{"blocks.1.fc1", "blocks.1.fc2", "blocks.1"}));
}

TEST_F(ActivationTraceModel, LayerRegexAlsoSearchesTheRegionPath) {
  init(trace_options(dir_, {{"layers", "blocks\\.2/"}}));  // only inside blocks.2
  run(1);
  shutdown();
  std::vector<std::string> modules;
  for (const auto& r : read_trace(dir_.file("trace.jsonl")).records) modules.push_back(r["module"]);
  EXPECT_EQ(modules, (std::vector<std::string>{"blocks.2.fc1", "blocks.2.fc2"}));
}

TEST_F(ActivationTraceModel, StepFilterKeepsChosenSteps) {
  init(trace_options(dir_, {{"steps", "1,3"}}));
  run(4);
  shutdown();
  const Trace t = read_trace(dir_.file("trace.jsonl"));
  ASSERT_EQ(t.records.size(), 2 * one_pass().size());
  for (std::size_t i = 0; i < t.records.size(); ++i) {
    EXPECT_EQ(t.records[i]["step"], i < one_pass().size() ? 1 : 3);
  }
}

// set_thread_step(): each thread's records carry its own step, and the
// sink's steps select them by it (FastVideo's trace_step is per thread); a
// thread without one follows set_step().
TEST_F(ActivationTraceModel, ThreadStepsAreEachThreadsOwn) {
  init(trace_options(dir_, {{"steps", "1,3"}}));
  set_step(0);  // the process's step: not selected
  EXPECT_EQ(thread_step(), kNoStep);
  const auto pass = [this](std::int64_t step) {
    torch::NoGradGuard no_grad;
    set_thread_step(step);
    EXPECT_EQ(thread_step(), step);
    regiontrace::forward(net_, torch::randn({5, 8}));
  };
  std::thread a([&] { pass(1); });
  std::thread b([&] {
    EXPECT_EQ(thread_step(), kNoStep) << "a new thread has none";
    pass(2);  // not selected: nothing
    pass(3);
  });
  a.join();
  b.join();
  {
    torch::NoGradGuard no_grad;
    set_thread_step(3);
    set_thread_step(kNoStep);                          // cleared: the process's step again
    regiontrace::forward(net_, torch::randn({5, 8}));  // step 0: not selected
    set_step(1);
    regiontrace::forward(net_, torch::randn({5, 8}));  // step 1
  }
  shutdown();
  std::map<std::int64_t, std::size_t> per_step;
  for (const auto& r : read_trace(dir_.file("trace.jsonl")).records) ++per_step[r["step"]];
  EXPECT_EQ(per_step, (std::map<std::int64_t, std::size_t>{{1, 2 * one_pass().size()},
                                                           {3, one_pass().size()}}));
}

TEST_F(ActivationTraceModel, OpLevelRecordsEveryMatchingAtenOp) {
  EXPECT_FALSE(at::hasGlobalCallbacks()) << "no observer before a sink asks";
  init(trace_options(dir_, {{"ops", "true"},
                            {"op_filter", "^aten::(addmm|linear|gelu|add)$"},
                            {"layers", "^blocks\\.0"},
                            {"stats", "sum,shape"}}));
  EXPECT_TRUE(at::hasGlobalCallbacks());
  torch::NoGradGuard no_grad;
  set_step(0);
  const torch::Tensor x = torch::randn({5, 8});
  regiontrace::forward(net_, x);
  shutdown();
  EXPECT_FALSE(at::hasGlobalCallbacks()) << "the observer leaves with the sink";
  const Trace t = read_trace(dir_.file("trace.jsonl"));
  const std::regex wanted("^aten::(addmm|linear|gelu|add)$");
  std::map<std::string, int> ops_per_module;
  std::vector<nlohmann::json> fc1_records;
  for (const auto& r : t.records) {
    const std::string module = r["module"];
    EXPECT_EQ(module.rfind("blocks.0", 0), 0u) << module;
    if (r.contains("op")) {
      const std::string op = r["op"];
      EXPECT_TRUE(std::regex_match(op, wanted)) << op;
      EXPECT_EQ(r["tensor"].get<std::string>().rfind(op + ":out", 0), 0u);
      ++ops_per_module[module];
    }
    if (module == "blocks.0.fc1") fc1_records.push_back(r);
  }
  EXPECT_GE(ops_per_module["blocks.0.fc1"], 1);
  EXPECT_GE(ops_per_module["blocks.0.fc2"], 1);
  EXPECT_GE(ops_per_module["blocks.0"], 2) << "gelu and the residual add";
  // The module's observed output is the last op's output, seen again.
  ASSERT_GE(fc1_records.size(), 2u);
  EXPECT_FALSE(fc1_records.back().contains("op"));
  EXPECT_EQ(fc1_records.back()["tensor"], "out");
  EXPECT_EQ(fc1_records[fc1_records.size() - 2]["sum"], fc1_records.back()["sum"]);
}

// An op that only allocates hands out uninitialised memory: its "activation"
// differs run to run and would make `regiontrace diff` report divergences
// that are not there. Skipped by default; `skip_ops: []` records them.
TEST_F(ActivationTraceModel, AllocationOnlyOpsAreSkippedByDefault) {
  torch::NoGradGuard no_grad;
  const at::Tensor x = torch::randn({4, 4});
  for (const bool by_default : {true, false}) {
    TempDir dir;
    std::map<std::string, std::string> keys = {{"ops", "true"}, {"stats", "shape"}};
    if (!by_default) keys["skip_ops"] = "";  // an empty list
    init(trace_options(dir, keys));
    {
      RT_REGION("allocations");
      at::Tensor e = at::empty({4, 4});
      at::Tensor l = at::empty_like(x);
      at::Tensor s = at::empty_strided({4, 4}, {4, 1});
      at::Tensor n = x.new_empty({2});
      e.resize_({8, 8});
      at::add(x, x);
    }
    shutdown();
    std::set<std::string> ops;
    for (const auto& r : read_trace(dir.file("trace.jsonl")).records) {
      if (r.contains("op")) ops.insert(r["op"].get<std::string>());
    }
    EXPECT_EQ(ops.count("aten::add"), 1u);
    for (const char* op : {"aten::empty", "aten::empty_like", "aten::empty_strided",
                           "aten::new_empty", "aten::resize_"}) {
      EXPECT_EQ(ops.count(op), by_default ? 0u : 1u) << op << (by_default ? " by default" : "");
    }
  }
}

TEST_F(ActivationTraceModel, StatisticsWorkIsNotSeenByTheOpObserver) {
  // Everything, everywhere: were compute_stats' own aten work observed, the
  // trace would never end (or hold ops outside the model's).
  torch::NoGradGuard no_grad;
  const at::Tensor strided = torch::randn({64, 64}).t().slice(0, 0, 64, 2);  // copied for the hash
  init(trace_options(dir_, {{"ops", "true"}, {"stats", "all"}}));
  {
    RT_REGION("only_this");
    regiontrace::observe("strided", strided);
  }
  shutdown();
  const Trace t = read_trace(dir_.file("trace.jsonl"));
  ASSERT_EQ(t.records.size(), 1u) << t.records.back().dump();
  EXPECT_EQ(t.records[0]["tensor"], "strided");
}

TEST_F(ActivationTraceModel, RunsTogetherWithTheTorchProfiler) {
  const std::string plugin = builtin_plugin_dir() + "/regiontrace_sink_torch_profiler.so";
  if (!std::filesystem::exists(plugin)) {
    GTEST_SKIP() << "the torch_profiler sink was not built (" << plugin << ")";
  }
  Options o = trace_options(dir_, {{"ops", "true"}, {"op_filter", "addmm"}});
  o.set("sinks.torch_profiler.enabled", "true");
  o.set("sinks.torch_profiler.gzip", "false");
  init(o);
  run(2);
  shutdown();
  const Trace t = read_trace(dir_.file("trace.jsonl"));
  std::size_t module_records = 0, op_records = 0;
  for (const auto& r : t.records) (r.contains("op") ? op_records : module_records)++;
  EXPECT_EQ(module_records, 2 * one_pass().size());
  EXPECT_GE(op_records, 2u * 3 * 2) << "addmm in every fc of every block, both steps";
  bool profiler_saw_regions = false;
  for (const std::string& f : list_files(dir_.path())) {
    if (f.find("trace.jsonl") != std::string::npos) continue;
    if (read_file(f).find("region::blocks.1.fc2") != std::string::npos) profiler_saw_regions = true;
  }
  EXPECT_TRUE(profiler_saw_regions) << "the profiler's files name the module regions";
}

// --- child processes ----------------------------------------------------------------

// Starts the child program with `env` added to a clean environment.
pid_t spawn_child(const std::vector<std::string>& env, const std::string& steps, int* stdout_fd) {
  int pipefd[2];
  EXPECT_EQ(::pipe(pipefd), 0);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(pipefd[1], 1);
    ::close(pipefd[0]);
    std::vector<std::string> all = env;
    all.push_back("REGIONTRACE_LOG_LEVEL=error");
    all.push_back("REGIONTRACE_PLUGIN_PATH=" + builtin_plugin_dir());
    std::vector<char*> envp;
    for (std::string& s : all) envp.push_back(s.data());
    envp.push_back(nullptr);
    char* argv[] = {const_cast<char*>(REGIONTRACE_ACTIVATION_CHILD),
                    const_cast<char*>(steps.c_str()), nullptr};
    ::execve(argv[0], argv, envp.data());
    ::_exit(127);
  }
  ::close(pipefd[1]);
  *stdout_fd = pipefd[0];
  return pid;
}

TEST(ActivationTraceProcess, FilesAreWholeAfterSigterm) {
  TempDir dir;
  const std::string file = dir.file("trace.jsonl");
  int out = -1;
  const pid_t pid = spawn_child(
      {"REGIONTRACE_SINKS=activation_trace", "REGIONTRACE_OUTPUT_DIR=" + dir.path(),
       "REGIONTRACE_ACTIVATION_TRACE_OUTPUT=" + file, "REGIONTRACE_ACTIVATION_TRACE_STATS=all"},
      "-1", &out);
  char c = 0;
  ASSERT_EQ(::read(out, &c, 1), 1) << "the child started its loop";
  // Let it write through a few step boundaries, then stop it mid-step.
  for (int i = 0; i < 500 && read_lines(file).size() < 40; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(::kill(pid, SIGTERM), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ::close(out);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) << status;
  const std::string text = read_file(file);
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n') << "no torn last line";
  const Trace t = read_trace(file);  // parses every line
  ASSERT_GE(t.records.size(), 40u);
  EXPECT_EQ(t.summary["records"], t.records.size());
  for (std::size_t i = 0; i < t.records.size(); ++i) EXPECT_EQ(t.records[i]["seq"], i);
}

TEST(ActivationTraceProcess, SeedVariablesConfigureTheSink) {
  TempDir dir;
  int out = -1;
  const pid_t pid = spawn_child(
      {"FASTVIDEO_TRACE_ACTIVATIONS=1", "FASTVIDEO_TRACE_OUTPUT=" + dir.file("acts_<pid>.jsonl"),
       "FASTVIDEO_TRACE_LAYERS=blocks\\.[13]", "FASTVIDEO_TRACE_STATS=abs_mean,sum,max,shape",
       "FASTVIDEO_TRACE_STEPS=1", "REGIONTRACE_OUTPUT_DIR=" + dir.path()},
      "3", &out);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ::close(out);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  const std::string file = dir.file("acts_" + std::to_string(pid) + ".jsonl");
  ASSERT_TRUE(std::filesystem::exists(file)) << "<pid> replaced by the child's pid";
  // Only records in the seed's layout: readers index rec["module"] on every
  // line; and nothing beside the file, as FastVideo writes it.
  Trace t;
  t.records = read_jsonl(file);
  for (const auto& r : t.records) EXPECT_TRUE(r.contains("module")) << r.dump();
  EXPECT_FALSE(std::filesystem::exists(file + ".summary.json"));
  EXPECT_EQ(regiontrace::test::list_files(dir.path()).size(), 1u);
  ASSERT_EQ(t.records.size(), 2u);
  EXPECT_EQ(t.records[0]["module"], "blocks.1");
  EXPECT_EQ(t.records[1]["module"], "blocks.3");
  for (const auto& r : t.records) {
    EXPECT_EQ(r["step"], 1);
    EXPECT_EQ(r["tensor"], "out");
    EXPECT_EQ(r["shape"], nlohmann::json::array({64, 256}));
    EXPECT_TRUE(r.contains("abs_mean") && r.contains("sum") && r.contains("max"));
    EXPECT_FALSE(r.contains("std"));
  }
}

}  // namespace
}  // namespace regiontrace::test
