// The `region_stats` sink: per region path (and per thread, per step) count,
// total, self time, mean, min, max and percentiles; a table at shutdown,
// region_stats_rank<r>_pid<p>.json, and Prometheus metrics live (an HTTP
// endpoint) or in a textfile. Guide: docs/region-stats.md.
// A flight recorder: every flush_interval_s (the host's flush thread) the
// JSON file (and the table file, when the table goes to one) is rewritten
// whole with what was measured so far and `"incomplete": true`, so a
// process killed by SIGKILL or ended by os._exit() leaves its statistics up
// to about that moment; close() writes the finished ones without it.
#pragma once

#include <atomic>
#include <deque>
#include <memory>
#include <mutex>

#include "metrics_server.hpp"
#include "prometheus_metrics.hpp"
#include "region_stats_settings.hpp"
#include "regiontrace/plugin.hpp"
#include "regiontrace/sdk/clock_sync.hpp"
#include "stats_report.hpp"
#include "textfile_exporter.hpp"
#include "thread_stats_registry.hpp"

namespace regiontrace::region_stats {

class RegionStatsSink : public Sink {
 public:
  static SinkSchema schema() { return RegionStatsSettings::schema(); }
  explicit RegionStatsSink(const SinkContext& ctx);
  ~RegionStatsSink() override;

  std::uint32_t interests() const override {
    const bool files = settings_.json || settings_.table == TableTarget::kFile;
    return kInterestRegions | kInterestSteps | kInterestTimestamps |
           (files ? kInterestPeriodicFlush : 0u);
  }
  void on_region_begin(const RegionEvent& e) override {
    if (!closed_.load(std::memory_order_relaxed)) threads_.for_thread(e.thread_id).begin(e);
  }
  void on_region_end(const RegionEvent& e) override {
    if (!closed_.load(std::memory_order_relaxed)) threads_.for_thread(e.thread_id).end(e);
  }
  void on_step(const StepEvent& e) override;
  void flush() override;
  void close() override;

 private:
  std::vector<prometheus::MetricFamily> collect() const;
  // `finished`: the run's last report (the table to stderr too); else a
  // flight recorder's, marked incomplete.
  void write_outputs(bool finished);

  const SinkContext ctx_;
  const RegionStatsSettings settings_;
  const sdk::clock_sync::Pair start_pair_;
  const std::int64_t start_ns_;
  ThreadRegistry threads_;
  std::atomic<bool> closed_{false};
  std::mutex close_mutex_;

  std::mutex steps_mutex_;
  std::deque<StepSpan> step_spans_;
  std::uint64_t steps_seen_ = 0;

  std::unique_ptr<MetricsServer> server_;
  std::unique_ptr<TextfileExporter> textfile_;
};

}  // namespace regiontrace::region_stats
