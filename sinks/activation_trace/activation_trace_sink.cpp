#include "activation_trace_sink.hpp"

#include <filesystem>
#include <stdexcept>
#include <utility>

#include "regiontrace/sdk/value_checks.hpp"
#include "regiontrace/tensor_stats.hpp"

namespace regiontrace::activation {
namespace {

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  for (std::size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size())) {
    s.replace(p, from.size(), to);
  }
}

}  // namespace

const std::vector<std::string>& allocation_only_ops() {
  // Their outputs hold whatever the allocator handed out until another op
  // writes them. resize_ and resize_as_ keep old values but grow into
  // uninitialised memory.
  static const std::vector<std::string>* ops = new std::vector<std::string>{
      "aten::empty",      "aten::empty_like",        "aten::empty_strided",
      "aten::new_empty",  "aten::new_empty_strided", "aten::resize_",
      "aten::resize_as_", "aten::empty_quantized",   "aten::_empty_affine_quantized",
  };
  return *ops;
}

SinkSchema ActivationTraceSink::schema() {
  return {
      KeySpec::path("output", "",
                    "JSONL file; <pid> and <rank> are replaced. Default: "
                    "<output_dir>/activations_rank<r>_pid<p>.jsonl")
          .checked_by(sdk::not_a_folder),
      KeySpec::string("layers", "",
                      "regex searched in each record's module name and region path "
                      "(blocks\\.(0|1)\\b; RE2: Python re without backreferences and "
                      "lookaround); empty = every region")
          .checked_by(NameFilter::problem),
      KeySpec::list("stats", "abs_mean,sum",
                    "statistics per tensor, in record order: " + join(stat_choices()),
                    stat_choices()),
      KeySpec::boolean("ops", false,
                       "also record the outputs of every aten op run inside selected regions "
                       "(costly: installs a RecordFunction callback)"),
      KeySpec::string("op_filter", "", "with ops: regex searched in aten op names (aten::mm)")
          .checked_by(NameFilter::problem),
      KeySpec::list("skip_ops", join(allocation_only_ops()),
                    "with ops: op names (exact) whose outputs are not recorded; the default "
                    "lists ops that only allocate, whose outputs are uninitialised memory "
                    "(statistics of garbage, different every run); [] records them too"),
      KeySpec::integer("max_records", 65536,
                       "records waiting for the writer thread before on_full applies")
          .range(1, 1e9),
      KeySpec::one_of("on_full", "block", {"block", "drop"},
                      "when max_records are waiting: block (lose nothing) or drop (counted in "
                      "the summary line)"),
      KeySpec::boolean("append", false,
                       "add records after what an existing output file holds instead of "
                       "replacing it (the seed's FASTVIDEO_TRACE_OUTPUT sets it: FastVideo "
                       "opens its file to append)"),
      KeySpec::one_of("summary", "line", {"line", "file", "none"},
                      "where the closing summary (records written, dropped) goes: the last "
                      "line of the JSONL, its own file <output>.summary.json, or nowhere (drops "
                      "are then only warned about; the seed's FASTVIDEO_TRACE_OUTPUT sets it: "
                      "FastVideo writes its file alone, and its readers expect only records)"),
  };
}

std::string resolve_output_path(const SinkContext& ctx, const std::string& output) {
  if (output.empty()) return ctx.output_path("activations", "jsonl");
  std::string path = output;
  const bool distinct =
      path.find("<rank>") != std::string::npos || path.find("<pid>") != std::string::npos;
  replace_all(path, "<pid>", std::to_string(ctx.pid()));
  replace_all(path, "<rank>", std::to_string(ctx.rank()));
  if (!distinct && ctx.world_size() > 1) {
    // Ranks never share a file.
    std::filesystem::path p(path);
    const std::string stem = p.stem().string() + "_rank" + std::to_string(ctx.rank());
    p.replace_filename(stem + p.extension().string());
    path = p.string();
  }
  return path;
}

ActivationTraceSink::ActivationTraceSink(const SinkContext& ctx)
    : ctx_(ctx),
      stats_(StatSet::parse(ctx.get_list("stats"))),
      ops_(ctx.get_bool("ops")),
      layers_("sinks.activation_trace.layers", ctx.get_string("layers")),
      op_filter_("sinks.activation_trace.op_filter", ctx.get_string("op_filter")) {
  for (const std::string& op : ctx.get_list("skip_ops")) skip_ops_.insert(op);
  stats_options_.numeric = stats_.needs_numeric();
  stats_options_.hash = stats_.needs_hash();
  RecordWriter::Options options;
  options.path = resolve_output_path(ctx, ctx.get_string("output"));
  options.capacity = static_cast<std::size_t>(ctx.get_int("max_records"));
  options.drop_when_full = ctx.get_string("on_full") == "drop";
  options.append = ctx.get_bool("append");
  if (ctx.get_string("summary") == "file") options.summary_path = options.path + ".summary.json";
  options.summary = ctx.get_string("summary") != "none";
  const std::filesystem::path parent = std::filesystem::path(options.path).parent_path();
  std::error_code ignored;
  if (!parent.empty()) std::filesystem::create_directories(parent, ignored);
  writer_ = std::make_unique<RecordWriter>(std::move(options), RecordFormatter(stats_, ctx.rank()));
  ctx.info("writing activation statistics to " + writer_->path());
}

std::uint32_t ActivationTraceSink::interests() const {
  return kInterestTensors | kInterestSteps | (ops_ ? kInterestOpOutputs : 0u);
}

void ActivationTraceSink::on_tensor(const TensorEvent& event) {
  if (closed_.load(std::memory_order_relaxed)) return;
  if (event.origin == TensorOrigin::kOpOutput &&
      (!op_filter_.matches(event.op) || skip_ops_.count(event.op) != 0)) {
    return;
  }
  if (!layers_.matches(event.path, event.module)) return;
  // Throwing switches this sink off (the host logs it once and closes us).
  if (writer_->failed()) throw std::runtime_error(writer_->failure());
  TensorStats stats = compute_stats(*event.tensor, stats_options_);
  writer_->submit(
      ActivationRecord(event.module, event.label, event.op, event.step, std::move(stats)));
}

void ActivationTraceSink::on_step(const StepEvent& /*event*/) {
  writer_->request_flush();
}

void ActivationTraceSink::flush() {
  writer_->flush();
}

void ActivationTraceSink::close() {
  closed_.store(true);
  writer_->close();
  // Said where no summary says it.
  if (writer_->dropped() > 0) {
    ctx_.warn(std::to_string(writer_->dropped()) +
              " activation records were dropped (on_full: "
              "drop; " +
              std::to_string(writer_->written()) + " written)");
  }
}

}  // namespace regiontrace::activation
