// activation_trace: per-tensor statistics of observed tensors (and, opt-in,
// of every aten op's outputs) inside the selected regions, written as JSONL
// (schema v1, activation_jsonl.hpp) for `regiontrace diff`.
//
// Threads: on_tensor runs on the application thread that observed the
// tensor: it filters, computes the statistics (the tensor is only valid
// during the call) and queues a record; the file is formatted and written by
// the RecordWriter's thread. on_step asks for a flush without waiting;
// flush() and close() wait for the file.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "name_filter.hpp"
#include "record_writer.hpp"
#include "regiontrace/plugin.hpp"
#include "stat_set.hpp"

namespace regiontrace::activation {

class ActivationTraceSink final : public Sink {
 public:
  static SinkSchema schema();
  explicit ActivationTraceSink(const SinkContext& ctx);

  std::uint32_t interests() const override;
  void on_tensor(const TensorEvent& event) override;
  void on_step(const StepEvent& event) override;
  void flush() override;
  void close() override;

  const std::string& output_path() const { return writer_->path(); }

 private:
  const SinkContext ctx_;
  StatSet stats_;
  StatsOptions stats_options_;
  bool ops_ = false;
  NameFilter layers_;
  NameFilter op_filter_;
  std::set<std::string, std::less<>> skip_ops_;
  std::atomic<bool> closed_{false};
  std::unique_ptr<RecordWriter> writer_;
};

// The default of `skip_ops`: ops whose outputs are only allocated, never
// written, so their statistics describe uninitialised memory.
const std::vector<std::string>& allocation_only_ops();

// Where the trace goes: `output` with <pid> and <rank> replaced (a rank
// suffix added in multi-rank runs when the template names neither), or
// <output_dir>/activations_rank<r>_pid<p>.jsonl by default.
std::string resolve_output_path(const SinkContext& ctx, const std::string& output);

}  // namespace regiontrace::activation
