#include "sink_output_checks.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "example_runner.hpp"
#include "test_support.hpp"
#include "trace_files.hpp"

namespace regiontrace::test {
namespace {

using json = nlohmann::json;

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0;
}

std::vector<std::string> numbered(const std::string& stem, int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back(stem + std::to_string(i));
  return out;
}

struct Slice {
  std::string name;
  double ts = 0;
  double end = 0;
  long long tid = 0;
};

// The profiler's own start, stop and export are not the program's time: a
// region's span ends at its last op, and the window's first step (the one a
// profiler start would sit in) begins at its first op, within
// kProfilerSlackUs (a few microseconds are the region's own code; the bound
// leaves room for a thread descheduled on a loaded machine, a few ms, and
// stays below the 10-50 ms a start or stop inside the span added). A step's
// end is not checked: after its selected regions the step goes on without
// being collected (validation, a checkpoint).
void check_spans_end_at_their_ops(const json& trace, const std::string& span_prefix,
                                  const std::string& path) {
  constexpr double kProfilerSlackUs = 8000;
  std::vector<Slice> ops;
  std::vector<Slice> regions;
  std::vector<Slice> steps;
  for (const json& e : trace.at("traceEvents")) {
    if (e.value("ph", std::string()) != "X" || !e.contains("dur")) continue;
    Slice s{e.value("name", std::string()), e.at("ts").get<double>(), 0, e.value("tid", 0LL)};
    s.end = s.ts + e.at("dur").get<double>();
    if (e.value("cat", std::string()) == "cpu_op") {
      ops.push_back(s);
    } else if (starts_with(s.name, span_prefix)) {
      regions.push_back(s);
    } else if (starts_with(s.name, "ProfilerStep#")) {
      steps.push_back(s);  // on a track of their own: ops of any thread count
    }
  }
  auto ops_within = [&](const Slice& span, bool same_thread, double* first, double* last) {
    bool any = false;
    for (const Slice& op : ops) {
      if ((same_thread && op.tid != span.tid) || op.ts < span.ts || op.end > span.end) continue;
      *first = any ? std::min(*first, op.ts) : op.ts;
      *last = any ? std::max(*last, op.end) : op.end;
      any = true;
    }
    return any;
  };
  for (const Slice& r : regions) {
    double first = 0;
    double last = 0;
    if (!ops_within(r, true, &first, &last)) continue;
    EXPECT_LE(r.end - last, kProfilerSlackUs)
        << r.name << " at " << r.ts << " us ends " << (r.end - last) << " us after its last op, in "
        << path;
  }
  EXPECT_FALSE(steps.empty()) << "no ProfilerStep# span in " << path;
  std::sort(steps.begin(), steps.end(), [](const Slice& a, const Slice& b) { return a.ts < b.ts; });
  if (steps.size() > 1) steps.resize(1);
  for (const Slice& st : steps) {
    double first = 0;
    double last = 0;
    ASSERT_TRUE(ops_within(st, false, &first, &last)) << st.name << ": no op in " << path;
    EXPECT_LE(first - st.ts, kProfilerSlackUs)
        << st.name << " begins " << (first - st.ts) << " us before its first op, in " << path;
  }
}

}  // namespace

ExampleShape small_video_shape() {
  ExampleShape s;
  s.name = "video_pipeline";
  s.hot_region = "profiler_region_inference_denoising";
  s.phases = {"profiler_region_model_loading", "profiler_region_inference_pre_denoising",
              "profiler_region_inference_denoising", "profiler_region_inference_post_denoising"};
  s.block_modules = numbered("blocks.", 4);
  s.steps = 4;
  s.observed = {"text_embeddings", "initial_latents", "latents", "video"};
  return s;
}

ExampleShape small_training_shape() {
  ExampleShape s;
  s.name = "training_loop";
  s.hot_region = "profiler_region_training_step";
  s.phases = {"profiler_region_model_loading", "profiler_region_training_epoch"};
  s.block_modules = numbered("blocks.", 2);
  s.steps = 6;  // 2 epochs x 3 steps
  return s;
}

void check_torch_profiler_output(const std::string& dir, const TorchProfilerExpectations& expect) {
  const std::vector<std::string> traces = files_under(dir, [](const std::string& n) {
    return starts_with(n, "torch_trace") && !contains(n, ".summary.") &&
           (ends_with(n, ".json.gz") || ends_with(n, ".json"));
  });
  // One step window (or one run without a schedule): one trace file.
  ASSERT_EQ(traces.size(), 1u) << "torch_profiler traces in " << dir << ": " << join_words(traces)
                               << "\n";
  const json trace = read_json_maybe_gz(traces[0]);
  const std::string span_prefix = expect.prefix + ".region::";

  std::set<std::string> span_names;
  std::set<long long> span_steps;
  std::size_t aten_ops = 0;
  bool shapes_seen = false;
  for (const json& e : trace.at("traceEvents")) {
    const std::string name = e.value("name", std::string());
    const std::string ph = e.value("ph", std::string());
    if (ph != "X") continue;
    if (starts_with(name, span_prefix)) {
      span_names.insert(name.substr(span_prefix.size()));
      if (e.contains("args") && e["args"].contains("step"))
        span_steps.insert(e["args"]["step"].get<long long>());
    } else if (starts_with(name, "aten::")) {
      ++aten_ops;
      if (e.contains("args") && e["args"].contains("Input Dims")) shapes_seen = true;
    }
  }
  EXPECT_EQ(span_names.count(expect.region), 1u)
      << "no span " << span_prefix << expect.region << " in " << traces[0];
  bool block_span = false;
  for (const std::string& n : span_names) block_span = block_span || starts_with(n, "blocks.");
  EXPECT_EQ(block_span, expect.block_spans) << "blocks.N spans in " << traces[0];
  EXPECT_GT(aten_ops, 10u) << "libtorch ops in " << traces[0];
  EXPECT_EQ(shapes_seen, expect.record_shapes) << "Input Dims in op args, " << traces[0];
  EXPECT_FALSE(events_named(trace, expect.prefix + ".profiler.enable_collection").empty())
      << "enable_collection marker in " << traces[0];
  EXPECT_EQ(span_steps, expect.span_steps) << "steps of the region spans in " << traces[0];
  if (!expect.window_steps.empty()) {
    ASSERT_TRUE(trace.contains("regiontrace")) << traces[0];
    const json& window = trace["regiontrace"].at("steps");
    EXPECT_EQ(window.at("first").get<long long>(), *expect.window_steps.begin()) << window.dump();
    EXPECT_EQ(window.at("last").get<long long>(), *expect.window_steps.rbegin()) << window.dump();
  }

  check_spans_end_at_their_ops(trace, span_prefix, traces[0]);

  // The summaries are in summaries/, out of the folder HTA loads.
  const std::string base = op_summary_base(traces[0]);
  const json summary = read_json(base + ".summary.json");
  EXPECT_GT(summary.at("op_calls").get<long long>(), 0) << base << ".summary.json";
  ASSERT_FALSE(summary.at("ops").empty()) << base << ".summary.json";
  // Which op leads by self time depends on the machine in a run this small
  // (autograd's ViewBackward0 came first in one of six runs): aten ops are
  // listed, not necessarily first.
  bool aten_listed = false;
  for (const json& op : summary["ops"]) {
    aten_listed = aten_listed || starts_with(op.at("name").get<std::string>(), "aten::");
  }
  EXPECT_TRUE(aten_listed) << base << ".summary.json";
  const std::string text = read_file(base + ".summary.txt");
  EXPECT_TRUE(contains(text, summary["ops"][0]["name"].get<std::string>())) << text;
}

void check_activation_trace_output(const std::string& dir, const ExampleShape& example,
                                   const std::vector<std::string>& stats) {
  const std::vector<std::string> files = files_under(dir, [](const std::string& n) {
    return starts_with(n, "activations") && ends_with(n, ".jsonl");
  });
  ASSERT_EQ(files.size(), 1u) << "activation traces in " << dir << ": " << join_words(files);
  // (module, tensor) -> steps seen
  std::map<std::pair<std::string, std::string>, std::set<long long>> seen;
  std::size_t records = 0;
  bool summary_line = false;
  for (const json& r : read_jsonl(files[0])) {
    ASSERT_EQ(r.at("v").get<int>(), 1) << r.dump();
    if (r.contains("summary")) {
      summary_line = true;
      EXPECT_EQ(r["summary"].at("dropped").get<long long>(), 0) << r.dump();
      continue;
    }
    ++records;
    for (const std::string& s : stats) {
      ASSERT_TRUE(r.contains(s)) << "stat " << s << " missing: " << r.dump();
      EXPECT_TRUE(r[s].is_number()) << "stat " << s << ": " << r.dump();
    }
    const long long step = r.at("step").is_null() ? -1 : r["step"].get<long long>();
    seen[{r.at("module").get<std::string>(), r.at("tensor").get<std::string>()}].insert(step);
  }
  EXPECT_TRUE(summary_line) << "no summary line at the end of " << files[0];
  std::set<long long> all_steps;
  for (int i = 0; i < example.steps; ++i) all_steps.insert(i);
  for (const std::string& block : example.block_modules) {
    auto it = seen.find({block, "out"});
    ASSERT_NE(it, seen.end()) << "no record of " << block << " out in " << files[0];
    EXPECT_EQ(it->second, all_steps) << block << " out: steps";
  }
  for (const std::string& tensor : example.observed) {
    bool found = false;
    for (const auto& [key, steps] : seen) found = found || key.second == tensor;
    EXPECT_TRUE(found) << "observed tensor " << tensor << " missing from " << files[0];
  }
  EXPECT_GE(records, example.block_modules.size() * std::size_t(example.steps));
}

void check_memory_snapshot_output(const std::string& dir, const ExampleShape& example) {
  const std::vector<std::string> files = files_under(dir, [](const std::string& n) {
    return starts_with(n, "memory_rank") && ends_with(n, ".jsonl");
  });
  ASSERT_EQ(files.size(), 1u) << "memory records in " << dir << ": " << join_words(files);
  std::map<std::string, std::vector<json>> by_name;
  for (const json& r : read_jsonl(files[0])) {
    if (!r.contains("path")) continue;  // not a region record
    for (const char* key : {"step", "duration_ns", "rss_bytes", "hwm_bytes", "devices"}) {
      ASSERT_TRUE(r.contains(key)) << key << " missing: " << r.dump();
    }
    const json& cpu = r["devices"].at("cpu");
    const long long entry = cpu.at("entry_bytes").get<long long>();
    const long long exit = cpu.at("exit_bytes").get<long long>();
    const long long peak = cpu.at("peak_bytes").get<long long>();
    EXPECT_GE(peak, std::max(entry, exit)) << r.dump();
    EXPECT_GT(r["rss_bytes"].get<long long>(), 0) << r.dump();
    EXPECT_GE(r["hwm_bytes"].get<long long>(), r["rss_bytes"].get<long long>()) << r.dump();
    EXPECT_GT(r["duration_ns"].get<long long>(), 0) << r.dump();
    std::string name = r.value("name", std::string());
    if (name.empty())
      name = r["path"].get<std::string>().substr(r["path"].get<std::string>().rfind('/') + 1);
    by_name[name].push_back(r);
  }
  for (const std::string& phase : example.phases) {
    EXPECT_FALSE(by_name[phase].empty()) << "no memory record of " << phase << " in " << files[0];
  }
  // Building the model allocates its weights and keeps them: a real figure,
  // not a zero (the smallest example model has well over 1 MB of weights).
  const auto& loading = by_name["profiler_region_model_loading"];
  if (!loading.empty()) {
    const json& cpu = loading.front()["devices"]["cpu"];
    EXPECT_GT(cpu["exit_bytes"].get<long long>() - cpu["entry_bytes"].get<long long>(), 1 << 20)
        << loading.front().dump();
  }
  const std::vector<std::string> summaries = files_under(dir, [](const std::string& n) {
    return starts_with(n, "memory_summary") && ends_with(n, ".json");
  });
  ASSERT_EQ(summaries.size(), 1u) << dir;
  const json summary = read_json(summaries[0]);
  EXPECT_TRUE(summary.at("leak_suspects").is_array()) << summary.dump();
}

void check_nvtx_records(const std::string& record_dir, const ExampleShape& example,
                        const std::string& prefix) {
  const std::vector<std::string> files =
      files_under(record_dir, [](const std::string& n) { return ends_with(n, ".jsonl"); });
  ASSERT_FALSE(files.empty()) << "the NVTX recording injection wrote nothing in " << record_dir;
  std::map<std::string, std::set<long long>> pushes;  // range name -> step payloads
  std::size_t pops = 0;
  for (const std::string& f : files) {
    for (const json& r : read_jsonl(f)) {
      const std::string kind = r.value("kind", std::string());
      if (kind == "pop") ++pops;
      if (kind != "push") continue;
      const long long payload = r.contains("payload") && r["payload"].is_number_integer()
                                    ? r["payload"].get<long long>()
                                    : -1;
      pushes[r.value("message", std::string())].insert(payload);
    }
  }
  std::size_t total_pushes = 0;
  for (const auto& [name, steps] : pushes) total_pushes += steps.size();
  EXPECT_GT(pops, 0u);
  for (const std::string& phase : example.phases) {
    EXPECT_EQ(pushes.count(prefix + ".region::" + phase), 1u) << "no NVTX range for " << phase;
  }
  std::set<long long> all_steps;
  for (int i = 0; i < example.steps; ++i) all_steps.insert(i);
  for (const std::string& block : example.block_modules) {
    auto it = pushes.find(prefix + ".region::" + block);
    ASSERT_NE(it, pushes.end()) << "no NVTX range for " << block;
    EXPECT_EQ(it->second, all_steps) << block << ": step payloads";
  }
}

void check_region_stats_output(const std::string& dir, const ExampleShape& example) {
  const std::vector<std::string> files = files_under(dir, [](const std::string& n) {
    return starts_with(n, "region_stats_rank0_pid") && ends_with(n, ".json");
  });
  ASSERT_EQ(files.size(), 1u) << "region_stats files in " << dir << ": " << join_words(files);
  const json doc = read_json(files[0]);
  const long long wall = doc.at("wall_ns").get<long long>();
  std::map<std::string, long long> count_by_name;
  std::map<std::string, const json*> top_level;
  for (const json& r : doc.at("regions")) {
    count_by_name[r.at("name").get<std::string>()] += r.at("count").get<long long>();
    if (r.at("depth") == 0) top_level[r.at("path").get<std::string>()] = &r;
    EXPECT_LE(r.at("min_ns").get<long long>(), r.at("p50_ns").get<long long>()) << r.dump();
    EXPECT_LE(r.at("p50_ns").get<long long>(), r.at("max_ns").get<long long>()) << r.dump();
    EXPECT_LE(r.at("self_ns").get<long long>(), r.at("total_ns").get<long long>()) << r.dump();
  }
  long long phases_total = 0;
  for (const std::string& phase : example.phases) {
    auto it = top_level.find(phase);
    ASSERT_NE(it, top_level.end()) << phase << " has no top-level row in " << files[0];
    EXPECT_GE(it->second->at("count").get<long long>(), 1) << phase;
    phases_total += it->second->at("total_ns").get<long long>();
  }
  // The phases run one after another on the main thread.
  EXPECT_LE(phases_total, wall);
  EXPECT_GE(count_by_name[example.hot_region], 1) << example.hot_region;
  for (const std::string& block : example.block_modules) {
    EXPECT_GE(count_by_name[block], example.steps) << block;
  }
  EXPECT_EQ(doc.at("steps").at("steps_seen"), example.steps);
  EXPECT_EQ(doc.at("steps").at("kept").size(), static_cast<std::size_t>(example.steps));
}

void check_timeline_output(const std::string& dir, const ExampleShape& example) {
  const std::vector<std::string> files = files_under(dir, [](const std::string& n) {
    return starts_with(n, "timeline_rank0_pid") && ends_with(n, ".json.gz");
  });
  ASSERT_EQ(files.size(), 1u) << "timeline traces in " << dir << ": " << join_words(files);
  const json trace = read_json_maybe_gz(files[0]);
  EXPECT_EQ(trace.at("timeline").at("dropped"), 0) << trace.at("timeline").dump();
  std::map<std::string, long long> count_by_region;
  std::set<std::string> top_level;
  std::set<long long> steps;
  std::set<std::string> process_names;
  double first = 0, last = 0;
  bool any = false;
  long long spans = 0, marks = 0;
  for (const json& e : trace.at("traceEvents")) {
    const std::string ph = e.value("ph", std::string());
    if (ph == "M" && e.value("name", std::string()) == "process_name") {
      process_names.insert(e.at("args").at("name").get<std::string>());
    }
    if (ph == "i") ++marks;
    if (ph != "X") continue;
    const double ts = e.at("ts").get<double>();
    const double end = ts + e.at("dur").get<double>();
    EXPECT_GE(e.at("dur").get<double>(), 0) << e.dump();
    first = any ? std::min(first, ts) : ts;
    last = any ? std::max(last, end) : end;
    any = true;
    const json& args = e.at("args");
    if (e.value("name", std::string()).rfind("ProfilerStep#", 0) == 0) {
      EXPECT_EQ(e.at("name"), "ProfilerStep#" + std::to_string(args.at("step").get<long long>()));
      EXPECT_TRUE(steps.insert(args.at("step").get<long long>()).second)
          << "step twice: " << e.dump();
      continue;
    }
    ++spans;
    const std::string region = args.at("region").get<std::string>();
    EXPECT_EQ(e.at("name"), "region::" + region);
    ++count_by_region[region];
    if (args.at("depth") == 0) {
      EXPECT_EQ(args.at("path"), region) << e.dump();
      top_level.insert(region);
    } else {
      EXPECT_TRUE(ends_with(args.at("path").get<std::string>(), "/" + region)) << e.dump();
    }
    EXPECT_FALSE(args.value("open_at_end", false))
        << "the example closes every region: " << e.dump();
  }
  ASSERT_TRUE(any) << files[0] << " has no spans";
  EXPECT_EQ(trace.at("timeline").at("recorded").get<long long>(),
            spans + marks + static_cast<long long>(steps.size()))
      << trace.at("timeline").dump();
  for (const std::string& phase : example.phases) {
    EXPECT_EQ(top_level.count(phase), 1u) << phase << " has no top-level span in " << files[0];
  }
  EXPECT_GE(count_by_region[example.hot_region], 1) << example.hot_region;
  for (const std::string& block : example.block_modules) {
    EXPECT_GE(count_by_region[block], example.steps) << block;
  }
  std::set<long long> expected_steps;
  for (int i = 0; i < example.steps; ++i) expected_steps.insert(i);
  EXPECT_EQ(steps, expected_steps);
  ASSERT_EQ(process_names.size(), 1u);
  EXPECT_EQ(process_names.begin()->rfind("rank 0 (pid ", 0), 0u) << *process_names.begin();
  EXPECT_GT(last, first);
}

}  // namespace regiontrace::test
