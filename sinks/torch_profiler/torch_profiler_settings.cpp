#include "torch_profiler_settings.hpp"

#include <algorithm>
#include <cmath>

namespace regiontrace::torch_profiler {

SinkSchema TorchProfilerSettings::schema() {
  const double kMax = 1e15;
  return {
      KeySpec::boolean(
          "record_shapes", false,
          "record input shapes and dtypes of every op (trace args, per-shape summary)"),
      KeySpec::boolean("profile_memory", false,
                       "record allocations and frees, and each op's memory delta"),
      KeySpec::boolean("with_stack", false,
                       "record the call stack of every op (JIT/Python frames)"),
      KeySpec::boolean("with_flops", false,
                       "estimate FLOPs of matmul, convolution and elementwise ops (turns "
                       "record_shapes on: libtorch computes FLOPs from the input shapes)"),
      KeySpec::list("activities", "cpu",
                    "what to collect: cpu (ops) and cuda (kernels, where libtorch has CUDA)",
                    {"cpu", "cuda"}),
      KeySpec::boolean("gzip", true, "write the trace as .json.gz (false: plain .json)"),
      KeySpec::integer("skip_first", 0, "schedule: steps skipped before the first cycle")
          .range(0, kMax),
      KeySpec::integer("wait", 0, "schedule: idle steps at the start of each cycle").range(0, kMax),
      KeySpec::integer("warmup", 0, "schedule: steps profiled but thrown away, after the idle ones")
          .range(0, kMax),
      KeySpec::integer("active", 0,
                       "schedule: steps recorded at the end of each cycle, one trace per cycle; "
                       "0 = no schedule")
          .range(0, kMax),
      KeySpec::integer("repeat", 0, "schedule: number of cycles; 0 = as long as steps come")
          .range(0, kMax),
      KeySpec::boolean(
          "trace_per_window", false,
          "without a schedule, each stretch of collection (from a selected region opening while "
          "no thread is inside one to the last one closing) is its own trace, written when it "
          "closes, so a long run killed later keeps the windows that closed before; with a "
          "schedule, windows follow the steps as before"),
      KeySpec::integer("max_events", 0,
                       "events per trace file; when reached, collection stops for good; 0 = no "
                       "limit")
          .range(0, kMax),
      KeySpec::real("max_trace_mb", 0,
                    "uncompressed size of a trace file in MB, never exceeded; collection stops "
                    "for good when an estimate of the file reaches it; 0 = no limit")
          .range(0, kMax),
      KeySpec::integer("keep_last", 0,
                       "keep the N newest traces of this rank in the output folder (earlier runs "
                       "included) and remove older ones; 0 = keep all")
          .range(0, kMax),
      KeySpec::string("prefix", "regiontrace",
                      "span and marker names: <prefix>.region::<name>, "
                      "<prefix>.profiler.enable_collection"),
      KeySpec::one_of("layout", "regiontrace", {"regiontrace", "fastvideo", "traces"},
                      "the folder's files: regiontrace (the traces, a folder HTA and TensorBoard "
                      "load, and their .summary.txt/.json in summaries/), fastvideo "
                      "(<host>_<pid>.<ns>.pt.trace.json.gz + summary_rank<r>.txt/.json beside "
                      "them, as FastVideo writes them), traces (the traces, no summaries)"),
  };
}

TorchProfilerSettings TorchProfilerSettings::read(const SinkContext& ctx,
                                                  std::vector<std::string>* notes) {
  TorchProfilerSettings s;
  s.profiler.record_shapes = ctx.get_bool("record_shapes");
  s.profiler.profile_memory = ctx.get_bool("profile_memory");
  s.profiler.with_stack = ctx.get_bool("with_stack");
  s.profiler.with_flops = ctx.get_bool("with_flops");
  if (s.profiler.with_flops && !s.profiler.record_shapes) {
    // libtorch computes FLOPs from the inputs it saves, and saves them only
    // with record_shapes: without it every op would report 0 FLOPs.
    // PyTorch's Python profiler turns shapes on for with_flops too.
    s.profiler.record_shapes = true;
    s.shapes_for_flops = true;
  }
  const std::vector<std::string>& activities = ctx.get_list("activities");
  s.profiler.cpu = std::find(activities.begin(), activities.end(), "cpu") != activities.end();
  s.profiler.cuda = std::find(activities.begin(), activities.end(), "cuda") != activities.end();
  s.gzip = ctx.get_bool("gzip");
  s.schedule.skip_first = ctx.get_int("skip_first");
  s.schedule.wait = ctx.get_int("wait");
  s.schedule.warmup = ctx.get_int("warmup");
  s.schedule.active = ctx.get_int("active");
  s.schedule.repeat = ctx.get_int("repeat");
  if (ctx.has("steps")) s.steps = ctx.get_int_list("steps");
  s.trace_per_window = ctx.get_bool("trace_per_window");
  s.max_events = ctx.get_int("max_events");
  s.max_trace_mb = ctx.get_double("max_trace_mb");
  s.keep_last = ctx.get_int("keep_last");
  s.prefix = ctx.get_string("prefix");
  const std::string layout = ctx.get_string("layout");
  s.layout = layout == "fastvideo" ? Layout::kFastVideo
             : layout == "traces"  ? Layout::kTraces
                                   : Layout::kRegiontrace;
  if (s.schedule.active == 0 &&
      (s.schedule.skip_first || s.schedule.wait || s.schedule.warmup || s.schedule.repeat)) {
    notes->push_back(
        "skip_first/wait/warmup/repeat are ignored while `active` is 0 (no schedule); set "
        "`active` to the number of steps to record per cycle");
  }
  if (s.schedule.active > 0 && s.trace_per_window) {
    notes->push_back(
        "trace_per_window changes nothing with a schedule (`active` > 0): each cycle is its own "
        "trace already, written when the cycle ends");
  }
  return s;
}

std::int64_t TorchProfilerSettings::op_budget() const {
  std::int64_t budget = max_events;
  if (max_trace_mb > 0) {
    // Bytes of JSON per recorded op as the trace writer formats them,
    // measured on training_loop (libtorch 1.13: 112 plain, 172 with shapes,
    // 225-250 with memory events, their share included), rounded up so that
    // collection stops just before the writer would cut: the file ends at
    // 90-100% of the limit. Stacks vary most (TorchScript/Python frames
    // only; plain C++ has none), so with_stack stops early.
    double bytes = 120;
    if (profiler.record_shapes) bytes += 60;
    if (profiler.with_stack) bytes += 250;
    if (profiler.with_flops) bytes += 10;
    if (profiler.profile_memory) bytes += 120;
    const auto by_size =
        std::max<std::int64_t>(1, static_cast<std::int64_t>(max_trace_mb * 1e6 / bytes));
    budget = budget > 0 ? std::min(budget, by_size) : by_size;
  }
  return budget;
}

std::uint64_t TorchProfilerSettings::max_trace_bytes() const {
  return max_trace_mb > 0 ? static_cast<std::uint64_t>(std::llround(max_trace_mb * 1e6)) : 0;
}

}  // namespace regiontrace::torch_profiler
